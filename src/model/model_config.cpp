// Reads and validates ModelConfig. Every value that later sizes a buffer or
// indexes a tensor is range-checked here, so the forward pass can trust it.
#include "model/model_config.h"

#include <cmath>
#include <cstdio>

namespace tessera {
namespace {

constexpr int64_t kMaxDim = 1 << 20;

Status read_positive(const GgufFile& f, const std::string& key, int32_t& out) {
    auto v = f.get_uint(key);
    if (!v) return v.status();
    if (*v == 0 || *v > static_cast<uint64_t>(kMaxDim)) {
        return Status::error("metadata '" + key + "' = " + std::to_string(*v) + " is out of range");
    }
    out = static_cast<int32_t>(*v);
    return Status();
}

Status read_rope(const GgufFile& f, const std::string& a, ModelConfig& c) {
    // llama.cpp's converters permute llama's and granite's Q/K for adjacent-pair RoPE.
    const bool permuted = a == "llama" || a == "granite" || a == "granitemoe" || a == "smollm3" || a == "mistral3";
    c.rope.style = permuted ? RopeStyle::Normal : RopeStyle::Neox;
    auto n_rot = f.get_uint_or(a + ".rope.dimension_count", static_cast<uint64_t>(c.head_dim));
    if (!n_rot) return n_rot.status();
    if (*n_rot == 0 || *n_rot > static_cast<uint64_t>(c.head_dim) || *n_rot % 2 != 0) {
        return Status::error("rope.dimension_count " + std::to_string(*n_rot) + " must be even and <= head_dim");
    }
    c.rope.n_rot = static_cast<int>(*n_rot);
    auto base = f.get_float_or(a + ".rope.freq_base", 10000.0);
    if (!base) return base.status();
    if (!(*base > 1.0) || !std::isfinite(*base)) return Status::error("rope.freq_base must be > 1");
    c.rope.freq_base = static_cast<float>(*base);

    auto type = f.get_string_or(a + ".rope.scaling.type", "none");
    if (!type) return type.status();
    auto factor = f.get_float_or(a + ".rope.scaling.factor", 0.0);
    if (!factor) return factor.status();
    auto scale_linear = f.get_float_or(a + ".rope.scale_linear", 0.0);  // older key
    if (!scale_linear) return scale_linear.status();
    double fac = *factor > 0 ? *factor : *scale_linear;
    if (*type == "none" && *scale_linear > 0) *type = "linear";
    if (*type == "linear" || *type == "yarn") {
        if (!(fac >= 1.0) || !std::isfinite(fac)) return Status::error("rope.scaling.factor must be >= 1");
        c.rope.freq_scale = static_cast<float>(1.0 / fac);
    } else if (*type != "none") {
        return Status::error("unsupported rope.scaling.type '" + *type + "'");
    }
    auto orig = f.get_uint_or(a + ".rope.scaling.original_context_length", static_cast<uint64_t>(c.n_ctx_train));
    if (!orig) return orig.status();
    c.rope.n_ctx_orig = static_cast<int>(std::min<uint64_t>(*orig, kMaxDim * 64));
    if (*type == "yarn") {
        c.rope.ext_factor = 1.0f;
        auto attn = f.get_float_or(a + ".rope.scaling.attn_factor", 1.0);
        if (!attn) return attn.status();
        c.rope.attn_factor = static_cast<float>(*attn);
        const struct {
            const char* key;
            float& out;
        } betas[] = {{".rope.scaling.yarn_beta_fast", c.rope.beta_fast}, {".rope.scaling.yarn_beta_slow", c.rope.beta_slow}};
        for (const auto& b : betas) {
            auto v = f.get_float_or(a + b.key, b.out);
            if (!v) return v.status();
            if (!(*v > 0.0) || !std::isfinite(*v)) return Status::error("metadata '" + a + b.key + "' must be > 0");
            b.out = static_cast<float>(*v);
        }
    }
    return Status();
}

Expected<ArchKind> arch_kind(const std::string& arch) {
    if (arch == "llama") return ArchKind::Llama;
    if (arch == "qwen2") return ArchKind::Qwen2;
    if (arch == "qwen3") return ArchKind::Qwen3;
    if (arch == "gemma2") return ArchKind::Gemma2;
    if (arch == "gemma3") return ArchKind::Gemma3;
    if (arch == "phi3") return ArchKind::Phi3;
    if (arch == "qwen2moe") return ArchKind::Qwen2Moe;
    if (arch == "qwen3moe") return ArchKind::Qwen3Moe;
    if (arch == "olmoe") return ArchKind::Olmoe;
    if (arch == "granite") return ArchKind::Granite;
    if (arch == "granitemoe") return ArchKind::GraniteMoe;
    if (arch == "olmo2") return ArchKind::Olmo2;
    if (arch == "smollm3") return ArchKind::SmolLM3;
    if (arch == "mistral3") return ArchKind::Mistral3;
    if (arch == "gpt-oss") return ArchKind::GptOss;
    return Status::error("unsupported architecture '" + arch +
                         "' (supported: llama (and mixtral-style llama MoE), qwen2, qwen3, gemma2, gemma3, phi3, "
                         "qwen2moe, qwen3moe, olmoe, granite, granitemoe, olmo2, smollm3, mistral3, gpt-oss)");
}

Status read_float_or(const GgufFile& f, const std::string& key, double dflt, float& out) {
    auto v = f.get_float_or(key, dflt);
    if (!v) return v.status();
    if (!std::isfinite(*v) || *v < 0) return Status::error("metadata '" + key + "' must be finite and >= 0");
    out = static_cast<float>(*v);
    return Status();
}

// Gemma2/3: local/global layer pattern, soft-capping, query scale and the
// local layers' RoPE. GGUF has no query_pre_attn_scalar key: like llama.cpp
// we know it from the model size (the 27B models scale by n_embd / n_head,
// the others by head_dim), recognised by the layer count.
Status read_gemma(const GgufFile& f, const std::string& a, ModelConfig& c) {
    c.sliding_window = 4096;  // gemma2's, for files written without the key (gemma3's always have it)
    if (c.kind == ArchKind::Gemma3 || f.find(a + ".attention.sliding_window")) {
        TS_RETURN_IF_ERROR(read_positive(f, a + ".attention.sliding_window", c.sliding_window));
    }
    auto period = f.get_uint_or(a + ".attention.sliding_window_pattern", c.kind == ArchKind::Gemma2 ? 2 : 6);
    if (!period) return period.status();
    if (*period < 1 || *period > static_cast<uint64_t>(kMaxDim)) {
        return Status::error("attention.sliding_window_pattern is out of range");
    }
    c.swa_period = static_cast<int32_t>(*period);
    TS_RETURN_IF_ERROR(read_float_or(f, a + ".attn_logit_softcapping", 0.0, c.attn_softcap));
    TS_RETURN_IF_ERROR(read_float_or(f, a + ".final_logit_softcapping", 0.0, c.final_softcap));
    const bool is_27b = (c.kind == ArchKind::Gemma2 && c.n_layer == 46) || (c.kind == ArchKind::Gemma3 && c.n_layer == 62);
    const float query_pre_attn_scalar = is_27b ? static_cast<float>(c.n_embd / c.n_head) : static_cast<float>(c.head_dim);
    c.attn_scale = 1.0f / std::sqrt(query_pre_attn_scalar);
    c.rope_local = c.rope;
    if (c.kind == ArchKind::Gemma3) {  // local layers: base 10000 and no scaling
        c.rope_local.freq_base = 10000.0f;
        c.rope_local.freq_scale = 1.0f;
        c.rope_local.ext_factor = 0.0f;
        c.rope_local.attn_factor = 1.0f;
    }
    return Status();
}

bool is_moe_kind(ArchKind k) {
    return k == ArchKind::Qwen2Moe || k == ArchKind::Qwen3Moe || k == ArchKind::Olmoe || k == ArchKind::GraniteMoe ||
           k == ArchKind::GptOss;
}

// Experts, as llama.cpp reads them: expert_count and expert_used_count;
// each expert's width from expert_feed_forward_length, else
// feed_forward_length (olmoe, mixtral); qwen2moe's shared expert from
// expert_shared_feed_forward_length, else feed_forward_length. The top-k
// weights are renormalised for qwen3moe, llama and granitemoe (mixtral and
// granitemoe: softmax over the chosen logits is the same thing) and not for qwen2moe and olmoe, unless
// the file's expert_weights_norm says otherwise.
Status read_moe(const GgufFile& f, const std::string& a, ModelConfig& c) {
    constexpr int32_t kMaxExperts = 1024;
    TS_RETURN_IF_ERROR(read_positive(f, a + ".expert_count", c.n_expert));
    TS_RETURN_IF_ERROR(read_positive(f, a + ".expert_used_count", c.n_expert_used));
    if (c.n_expert > kMaxExperts || c.n_expert_used > c.n_expert) {
        return Status::error("expert_used_count " + std::to_string(c.n_expert_used) + " of expert_count " +
                             std::to_string(c.n_expert) + " is out of range");
    }
    c.n_ff_exp = c.n_ff;
    if (f.find(a + ".expert_feed_forward_length")) {
        TS_RETURN_IF_ERROR(read_positive(f, a + ".expert_feed_forward_length", c.n_ff_exp));
    }
    if (c.kind == ArchKind::Qwen2Moe) {
        c.n_ff_shexp = c.n_ff;
        if (f.find(a + ".expert_shared_feed_forward_length")) {
            TS_RETURN_IF_ERROR(read_positive(f, a + ".expert_shared_feed_forward_length", c.n_ff_shexp));
        }
    }
    c.expert_weights_norm =
        c.kind == ArchKind::Qwen3Moe || c.kind == ArchKind::Llama || c.kind == ArchKind::GraniteMoe;
    if (f.find(a + ".expert_weights_norm")) {
        auto norm = f.get_bool(a + ".expert_weights_norm");
        if (!norm) return norm.status();
        c.expert_weights_norm = *norm;
    }
    auto gating = f.get_uint_or(a + ".expert_gating_func", 1);  // 1 softmax, 2 sigmoid (GGUF's numbering)
    if (!gating) return gating.status();
    if (*gating != 1 && *gating != 2) return Status::error("expert_gating_func must be 1 (softmax) or 2 (sigmoid)");
    c.expert_gating = *gating == 1 ? ExpertGating::Softmax : ExpertGating::Sigmoid;
    return Status();
}

// Granite's multipliers (llama.cpp's keys; each one optional, 1 without it)
// and its query scale, which replaces 1/sqrt(head_dim).
Status read_granite(const GgufFile& f, const std::string& a, ModelConfig& c) {
    const struct {
        const char* key;
        float& out;
    } scales[] = {{".embedding_scale", c.embedding_scale},
                  {".residual_scale", c.residual_scale},
                  {".logit_scale", c.logit_scale},
                  {".attention.scale", c.attn_scale}};
    for (const auto& s : scales) {
        TS_RETURN_IF_ERROR(read_float_or(f, a + s.key, s.out, s.out));
        if (!(s.out > 0)) return Status::error("metadata '" + a + s.key + "' must be > 0");
    }
    return Status();
}

// mistral3 (Ministral 3): YaRN whose magnitude follows Hugging Face's
// get_mscale(factor, 1) / get_mscale(factor, mscale_all_dim), with
// mscale_all_dim in rope.scaling.yarn_log_multiplier (as llama.cpp's converter
// writes it; RopeParams multiplies by get_mscale(factor, 1) itself), and the
// optional query temperature of attention.temperature_scale over windows of
// the original context length. Its MoE variant is not implemented.
Status read_mistral3(const GgufFile& f, const std::string& a, ModelConfig& c) {
    if (f.find(a + ".expert_count")) return Status::error("mistral3 with experts is not supported");
    auto log_mul = f.get_float_or(a + ".rope.scaling.yarn_log_multiplier", 0.0);
    if (!log_mul) return log_mul.status();
    if (!std::isfinite(*log_mul) || *log_mul < 0) return Status::error("rope.scaling.yarn_log_multiplier must be >= 0");
    if (*log_mul > 0 && c.rope.ext_factor > 0) {
        const double ln_factor = std::log(1.0 / c.rope.freq_scale);
        c.rope.attn_factor = static_cast<float>(1.0 / (1.0 + 0.1 * *log_mul * ln_factor));
    }
    TS_RETURN_IF_ERROR(read_float_or(f, a + ".attention.temperature_scale", 0.0, c.attn_temp_scale));
    if (c.attn_temp_scale > 0) {
        if (c.rope.n_ctx_orig <= 0) return Status::error("attention.temperature_scale needs an original context length");
        c.attn_temp_length = c.rope.n_ctx_orig;
    }
    return Status();
}

// gpt-oss, as llama.cpp reads it: the window from attention.sliding_window
// (required), windowed layers 0, 2, 4... (attention.sliding_window_pattern,
// default 2, as in Hugging Face's layer_types), the router's softmax over
// the k chosen logits (the same as softmax, top-k, renormalise), and the
// SwiGLU clamp, which no GGUF key carries (llama.cpp fixes alpha 1.702 and
// limit 7 too). Its YaRN ramp is not rounded to whole dimensions
// (Hugging Face's "truncate": false; llama.cpp rounds, so differs slightly).
Status read_gpt_oss(const GgufFile& f, const std::string& a, ModelConfig& c) {
    TS_RETURN_IF_ERROR(read_positive(f, a + ".attention.sliding_window", c.sliding_window));
    auto period = f.get_uint_or(a + ".attention.sliding_window_pattern", 2);
    if (!period) return period.status();
    if (*period < 1 || *period > static_cast<uint64_t>(kMaxDim)) {
        return Status::error("attention.sliding_window_pattern is out of range");
    }
    c.swa_period = static_cast<int32_t>(*period);
    // The windowed layers' own RoPE base (llama.cpp reads it; gpt-oss files
    // do not carry it): not implemented, so a different one is refused.
    auto swa_base = f.get_float_or(a + ".rope.freq_base_swa", c.rope.freq_base);
    if (!swa_base) return swa_base.status();
    if (static_cast<float>(*swa_base) != c.rope.freq_base) {
        return Status::error("gpt-oss with its own rope.freq_base_swa is not supported yet");
    }
    c.expert_gating = ExpertGating::Softmax;
    c.expert_weights_norm = true;
    c.swiglu_limit = 7.0f;
    c.swiglu_alpha = 1.702f;
    c.rope.yarn_truncate = false;
    return Status();
}

}  // namespace

Expected<ModelConfig> ModelConfig::from_gguf(const GgufFile& f) {
    ModelConfig c;
    auto arch = f.get_string("general.architecture");
    if (!arch) return arch.status();
    c.arch = *arch;
    TS_ASSIGN_OR_RETURN(c.kind, arch_kind(c.arch));
    const std::string& a = c.arch;
    c.qkv_bias = c.kind == ArchKind::Qwen2 || c.kind == ArchKind::Qwen2Moe || c.kind == ArchKind::GptOss;
    c.qk_norm = c.kind == ArchKind::Qwen3 || c.kind == ArchKind::Gemma3 || c.kind == ArchKind::Qwen3Moe;
    c.qk_norm_full = c.kind == ArchKind::Olmoe || c.kind == ArchKind::Olmo2;
    TS_RETURN_IF_ERROR(read_positive(f, a + ".embedding_length", c.n_embd));
    TS_RETURN_IF_ERROR(read_positive(f, a + ".block_count", c.n_layer));
    TS_RETURN_IF_ERROR(read_positive(f, a + ".feed_forward_length", c.n_ff));
    TS_RETURN_IF_ERROR(read_positive(f, a + ".attention.head_count", c.n_head));
    c.n_head_kv = c.n_head;
    if (f.find(a + ".attention.head_count_kv")) {
        TS_RETURN_IF_ERROR(read_positive(f, a + ".attention.head_count_kv", c.n_head_kv));
    }
    if (c.n_head % c.n_head_kv != 0) {
        return Status::error("head_count " + std::to_string(c.n_head) + " is not a multiple of head_count_kv " +
                             std::to_string(c.n_head_kv));
    }
    c.n_ctx_train = 4096;
    if (f.find(a + ".context_length")) TS_RETURN_IF_ERROR(read_positive(f, a + ".context_length", c.n_ctx_train));
    if (f.find(a + ".attention.key_length")) {
        TS_RETURN_IF_ERROR(read_positive(f, a + ".attention.key_length", c.head_dim));
    } else {
        if (c.n_embd % c.n_head != 0) return Status::error("embedding_length is not a multiple of head_count");
        c.head_dim = c.n_embd / c.n_head;
    }
    if (c.head_dim > 1024) return Status::error("head dimension " + std::to_string(c.head_dim) + " is too large");
    auto eps = f.get_float_or(a + ".attention.layer_norm_rms_epsilon", 1e-5);
    if (!eps) return eps.status();
    if (!(*eps > 0.0 && *eps < 1.0)) return Status::error("layer_norm_rms_epsilon is out of range");
    c.norm_eps = static_cast<float>(*eps);

    const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
    if (!embd) return Status::error("tensor 'token_embd.weight' is missing");
    if (embd->n_dims != 2 || embd->ne[0] != c.n_embd || embd->ne[1] > kMaxDim * 4) {
        return Status::error("tensor 'token_embd.weight' has an unexpected shape");
    }
    c.n_vocab = static_cast<int32_t>(embd->ne[1]);
    TS_RETURN_IF_ERROR(read_rope(f, a, c));
    c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    if (c.is_gemma()) TS_RETURN_IF_ERROR(read_gemma(f, a, c));
    if (c.is_gemma()) c.embedding_scale = std::sqrt(static_cast<float>(c.n_embd));
    if (c.kind == ArchKind::Granite || c.kind == ArchKind::GraniteMoe) TS_RETURN_IF_ERROR(read_granite(f, a, c));
    if (c.kind == ArchKind::Mistral3) TS_RETURN_IF_ERROR(read_mistral3(f, a, c));
    if (c.kind == ArchKind::SmolLM3) c.nope_period = 4;  // llama.cpp's fixed value; no GGUF key carries it
    // olmo2 files with a sliding window are Olmo 3 (local layers, their own
    // RoPE): not implemented, so refused rather than run wrong.
    if (c.kind == ArchKind::Olmo2) {
        auto window = f.get_uint_or(a + ".attention.sliding_window", 0);
        if (!window) return window.status();
        if (*window > 0) return Status::error("olmo2 with attention.sliding_window (Olmo 3) is not supported yet");
    }
    // A llama file with experts is mixtral-style (llama.cpp reads it so too).
    auto llama_experts = f.get_uint_or(a + ".expert_count", 0);
    if (!llama_experts) return llama_experts.status();
    if (is_moe_kind(c.kind) || (c.kind == ArchKind::Llama && *llama_experts > 0)) {
        TS_RETURN_IF_ERROR(read_moe(f, a, c));
    }
    if (c.kind == ArchKind::GptOss) TS_RETURN_IF_ERROR(read_gpt_oss(f, a, c));
    // phi3's sliding_window key is ignored, as llama.cpp does (its converter
    // does not write the window the models were trained with). Its LongRoPE
    // (the rope_factors_long/short tensors of the 128k models) is not
    // implemented: ModelWeights::bind refuses such files.
    return c;
}

}  // namespace tessera

namespace tessera {
namespace {

std::string rope_line(const RopeParams& r) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s, %d dims, base %g, scale %g%s", r.style == RopeStyle::Normal ? "normal" : "neox",
                  r.n_rot, r.freq_base, r.freq_scale, r.ext_factor > 0 ? ", yarn" : "");
    return buf;
}

}  // namespace

std::string ModelConfig::describe() const {
    std::string out;
    auto line = [&](const char* name, const std::string& value) { out += std::string(name) + ": " + value + "\n"; };
    line("architecture", arch);
    line("layers", std::to_string(n_layer));
    line("embedding", std::to_string(n_embd));
    line("heads", std::to_string(n_head) + " (kv " + std::to_string(n_head_kv) + ", head_dim " +
                      std::to_string(head_dim) + ")");
    if (!is_moe()) line("feed_forward", std::to_string(n_ff) + (is_gemma() ? " (GeGLU)" : " (SwiGLU)"));
    line("vocab", std::to_string(n_vocab));
    line("context_train", std::to_string(n_ctx_train));
    line("rope", rope_line(rope));
    if (qkv_bias) line("qkv_bias", "yes");
    if (qk_norm) line("qk_norm", "yes");
    if (qk_norm_full) line("qk_norm", "yes (whole projections)");
    if (is_moe()) {
        line("experts", std::to_string(n_expert) + " (" + std::to_string(n_expert_used) + " used, ffn " +
                            std::to_string(n_ff_exp) + ", " +
                            (expert_gating == ExpertGating::Softmax ? "softmax" : "sigmoid") +
                            (expert_weights_norm ? ", renormalised" : "") + ")");
        if (n_ff_shexp > 0) line("shared_expert", "ffn " + std::to_string(n_ff_shexp) + " (sigmoid gate)");
    }
    line("attention_scale", std::to_string(attn_scale));
    if (nope_period > 0) line("nope_layers", "every " + std::to_string(nope_period) + "th layer without RoPE");
    if (attn_temp_scale > 0) {
        line("attention_temperature", std::to_string(attn_temp_scale) + " per " + std::to_string(attn_temp_length) +
                                          " positions");
    }
    if (swiglu_limit > 0) {
        line("swiglu_clamp", "limit " + std::to_string(swiglu_limit) + ", alpha " + std::to_string(swiglu_alpha));
    }
    if (sliding_window > 0) {
        line("sliding_window", std::to_string(sliding_window) + " (one global layer in every " +
                                   std::to_string(swa_period) + ")");
        if (is_gemma()) line("rope_local", rope_line(rope_local));
    }
    if (embedding_scale != 1.0f) line("embedding_scale", std::to_string(embedding_scale));
    if (residual_scale != 1.0f) line("residual_scale", std::to_string(residual_scale));
    if (logit_scale != 1.0f) line("logit_scale", std::to_string(logit_scale));
    if (attn_softcap > 0) line("attn_softcap", std::to_string(attn_softcap));
    if (final_softcap > 0) line("final_softcap", std::to_string(final_softcap));
    return out;
}

}  // namespace tessera
