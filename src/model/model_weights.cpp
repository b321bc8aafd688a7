// Binds GGUF tensors to the forward pass's weight slots, rejecting any missing
// tensor, wrong shape or unsupported type with a message naming the tensor.
#include "model/model_weights.h"

#include "tensor/quant.h"

namespace tessera {
namespace {

std::string layer_name(int layer, const char* suffix) {
    return "blk." + std::to_string(layer) + "." + suffix;
}

Expected<WeightMatrix> matrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) return Status::error("tensor '" + name + "' is missing");
    if (t->n_dims != 2 || t->ne[0] != cols || t->ne[1] != rows) {
        return Status::error("tensor '" + name + "' has shape [" + std::to_string(t->ne[0]) + ", " +
                             std::to_string(t->ne[1]) + "], expected [" + std::to_string(cols) + ", " +
                             std::to_string(rows) + "]");
    }
    if (!is_supported_weight_type(t->type)) {
        return Status::error("tensor '" + name + "' has unsupported type " + ggml_type_name(t->type));
    }
    return WeightMatrix{t->type, t->data, rows, cols, *ggml_row_bytes(t->type, cols)};
}

// Rows [first, first + n) of m: rows are independent (whole blocks), so a
// row range is a matrix of its own.
WeightMatrix row_range(const WeightMatrix& m, int64_t first, int64_t n) {
    return WeightMatrix{m.type, m.data + static_cast<size_t>(first) * m.row_bytes, n, m.cols, m.row_bytes};
}

// The floats of an F32 tensor whose shape the caller checked.
Expected<const float*> f32_data(const GgufTensorInfo* t, const std::string& name) {
    if (t->type != GgmlType::F32) return Status::error("tensor '" + name + "' must be F32");
    if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0) {
        return Status::error("tensor '" + name + "' is misaligned");
    }
    return reinterpret_cast<const float*>(t->data);
}

Expected<const float*> vector_f32(const GgufFile& f, const std::string& name, int64_t n) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) return Status::error("tensor '" + name + "' is missing");
    if (t->n_elements() != n || t->ne[0] != n) {
        return Status::error("tensor '" + name + "' should have " + std::to_string(n) + " elements");
    }
    return f32_data(t, name);
}

// An F32 [cols, n] tensor (ggml order): one bias row of cols per expert.
Expected<const float*> expert_biases(const GgufFile& f, const std::string& name, int64_t cols, int64_t n) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) return Status::error("tensor '" + name + "' is missing");
    if (t->n_dims != 2 || t->ne[0] != cols || t->ne[1] != n) {
        return Status::error("tensor '" + name + "' should have shape [" + std::to_string(cols) + ", " +
                             std::to_string(n) + "]");
    }
    return f32_data(t, name);
}

// The n slices of a 3-D expert tensor [cols, rows, n] (ggml order), one
// matrix per expert.
Expected<std::vector<WeightMatrix>> experts(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows,
                                            int64_t n) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) return Status::error("tensor '" + name + "' is missing");
    if (t->n_dims != 3 || t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != n) {
        return Status::error("tensor '" + name + "' has shape [" + std::to_string(t->ne[0]) + ", " +
                             std::to_string(t->ne[1]) + ", " + std::to_string(t->ne[2]) + "], expected [" +
                             std::to_string(cols) + ", " + std::to_string(rows) + ", " + std::to_string(n) + "]");
    }
    if (!is_supported_weight_type(t->type)) {
        return Status::error("tensor '" + name + "' has unsupported type " + ggml_type_name(t->type));
    }
    const size_t row_bytes = *ggml_row_bytes(t->type, cols);
    std::vector<WeightMatrix> out;
    for (int64_t e = 0; e < n; ++e) {
        out.push_back(WeightMatrix{t->type, t->data + static_cast<size_t>(e * rows) * row_bytes, rows, cols, row_bytes});
    }
    return out;
}

// qwen2moe's shared-expert gate is one row; converters write it as [n_embd]
// or [n_embd, 1].
Expected<WeightMatrix> gate_row(const GgufFile& f, const std::string& name, int64_t cols) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) return Status::error("tensor '" + name + "' is missing");
    if (t->n_dims > 2 || t->ne[0] != cols || t->n_elements() != cols) {
        return Status::error("tensor '" + name + "' should have " + std::to_string(cols) + " elements");
    }
    if (!is_supported_weight_type(t->type)) {
        return Status::error("tensor '" + name + "' has unsupported type " + ggml_type_name(t->type));
    }
    return WeightMatrix{t->type, t->data, 1, cols, *ggml_row_bytes(t->type, cols)};
}

Status bind_experts(const GgufFile& f, const ModelConfig& c, int l, ExpertWeights& m) {
    TS_ASSIGN_OR_RETURN(m.gate_inp, matrix(f, layer_name(l, "ffn_gate_inp.weight"), c.n_embd, c.n_expert));
    if (f.find_tensor(layer_name(l, "exp_probs_b.bias"))) {
        TS_ASSIGN_OR_RETURN(m.selection_bias, vector_f32(f, layer_name(l, "exp_probs_b.bias"), c.n_expert));
    }
    TS_ASSIGN_OR_RETURN(m.gate, experts(f, layer_name(l, "ffn_gate_exps.weight"), c.n_embd, c.n_ff_exp, c.n_expert));
    TS_ASSIGN_OR_RETURN(m.up, experts(f, layer_name(l, "ffn_up_exps.weight"), c.n_embd, c.n_ff_exp, c.n_expert));
    TS_ASSIGN_OR_RETURN(m.down, experts(f, layer_name(l, "ffn_down_exps.weight"), c.n_ff_exp, c.n_embd, c.n_expert));
    if (c.kind == ArchKind::GptOss) {
        TS_ASSIGN_OR_RETURN(m.gate_inp_bias, vector_f32(f, layer_name(l, "ffn_gate_inp.bias"), c.n_expert));
        TS_ASSIGN_OR_RETURN(m.gate_bias, expert_biases(f, layer_name(l, "ffn_gate_exps.bias"), c.n_ff_exp, c.n_expert));
        TS_ASSIGN_OR_RETURN(m.up_bias, expert_biases(f, layer_name(l, "ffn_up_exps.bias"), c.n_ff_exp, c.n_expert));
        TS_ASSIGN_OR_RETURN(m.down_bias, expert_biases(f, layer_name(l, "ffn_down_exps.bias"), c.n_embd, c.n_expert));
    }
    if (c.n_ff_shexp > 0) {
        TS_ASSIGN_OR_RETURN(m.gate_inp_shexp, gate_row(f, layer_name(l, "ffn_gate_inp_shexp.weight"), c.n_embd));
        TS_ASSIGN_OR_RETURN(m.gate_shexp, matrix(f, layer_name(l, "ffn_gate_shexp.weight"), c.n_embd, c.n_ff_shexp));
        TS_ASSIGN_OR_RETURN(m.up_shexp, matrix(f, layer_name(l, "ffn_up_shexp.weight"), c.n_embd, c.n_ff_shexp));
        TS_ASSIGN_OR_RETURN(m.down_shexp, matrix(f, layer_name(l, "ffn_down_shexp.weight"), c.n_ff_shexp, c.n_embd));
    }
    return Status();
}

Status bind_layer(const GgufFile& f, const ModelConfig& c, int l, LayerWeights& w) {
    const bool pre_norms = c.kind != ArchKind::Olmo2;  // olmo2 has post-norms only
    if (pre_norms) TS_ASSIGN_OR_RETURN(w.attn_norm, vector_f32(f, layer_name(l, "attn_norm.weight"), c.n_embd));
    if (f.find_tensor(layer_name(l, "attn_qkv.weight"))) {
        WeightMatrix qkv;
        TS_ASSIGN_OR_RETURN(qkv, matrix(f, layer_name(l, "attn_qkv.weight"), c.n_embd, c.q_dim() + 2 * c.kv_dim()));
        w.wq = row_range(qkv, 0, c.q_dim());
        w.wk = row_range(qkv, c.q_dim(), c.kv_dim());
        w.wv = row_range(qkv, c.q_dim() + c.kv_dim(), c.kv_dim());
    } else {
        TS_ASSIGN_OR_RETURN(w.wq, matrix(f, layer_name(l, "attn_q.weight"), c.n_embd, c.q_dim()));
        TS_ASSIGN_OR_RETURN(w.wk, matrix(f, layer_name(l, "attn_k.weight"), c.n_embd, c.kv_dim()));
        TS_ASSIGN_OR_RETURN(w.wv, matrix(f, layer_name(l, "attn_v.weight"), c.n_embd, c.kv_dim()));
    }
    if (c.qkv_bias) {
        TS_ASSIGN_OR_RETURN(w.bq, vector_f32(f, layer_name(l, "attn_q.bias"), c.q_dim()));
        TS_ASSIGN_OR_RETURN(w.bk, vector_f32(f, layer_name(l, "attn_k.bias"), c.kv_dim()));
        TS_ASSIGN_OR_RETURN(w.bv, vector_f32(f, layer_name(l, "attn_v.bias"), c.kv_dim()));
    }
    if (c.qk_norm_full) {  // olmoe, olmo2: one norm over the whole Q (K) projection
        TS_ASSIGN_OR_RETURN(w.q_norm, vector_f32(f, layer_name(l, "attn_q_norm.weight"), c.q_dim()));
        TS_ASSIGN_OR_RETURN(w.k_norm, vector_f32(f, layer_name(l, "attn_k_norm.weight"), c.kv_dim()));
    } else if (c.qk_norm) {
        TS_ASSIGN_OR_RETURN(w.q_norm, vector_f32(f, layer_name(l, "attn_q_norm.weight"), c.head_dim));
        TS_ASSIGN_OR_RETURN(w.k_norm, vector_f32(f, layer_name(l, "attn_k_norm.weight"), c.head_dim));
    }
    TS_ASSIGN_OR_RETURN(w.wo, matrix(f, layer_name(l, "attn_output.weight"), c.q_dim(), c.n_embd));
    if (c.kind == ArchKind::GptOss) {
        TS_ASSIGN_OR_RETURN(w.bo, vector_f32(f, layer_name(l, "attn_output.bias"), c.n_embd));
        TS_ASSIGN_OR_RETURN(w.attn_sinks, vector_f32(f, layer_name(l, "attn_sinks.weight"), c.n_head));
    }
    // gpt-oss's FFN norm keeps Hugging Face's name (post_attention_layernorm).
    const char* ffn_norm = c.kind == ArchKind::GptOss ? "post_attention_norm.weight" : "ffn_norm.weight";
    if (pre_norms) TS_ASSIGN_OR_RETURN(w.ffn_norm, vector_f32(f, layer_name(l, ffn_norm), c.n_embd));
    if (c.is_moe()) {
        TS_RETURN_IF_ERROR(bind_experts(f, c, l, w.moe));
    } else if (c.kind == ArchKind::Phi3) {  // gate rows first, then up (Phi3MLP's gate_up_proj)
        WeightMatrix gate_up;
        TS_ASSIGN_OR_RETURN(gate_up, matrix(f, layer_name(l, "ffn_up.weight"), c.n_embd, 2 * static_cast<int64_t>(c.n_ff)));
        w.w_gate = row_range(gate_up, 0, c.n_ff);
        w.w_up = row_range(gate_up, c.n_ff, c.n_ff);
    } else {
        TS_ASSIGN_OR_RETURN(w.w_gate, matrix(f, layer_name(l, "ffn_gate.weight"), c.n_embd, c.n_ff));
        TS_ASSIGN_OR_RETURN(w.w_up, matrix(f, layer_name(l, "ffn_up.weight"), c.n_embd, c.n_ff));
    }
    if (!c.is_moe()) TS_ASSIGN_OR_RETURN(w.w_down, matrix(f, layer_name(l, "ffn_down.weight"), c.n_ff, c.n_embd));
    if (c.is_gemma() || c.kind == ArchKind::Olmo2) {  // norms after attention and after the FFN, before each residual add
        TS_ASSIGN_OR_RETURN(w.post_attn_norm, vector_f32(f, layer_name(l, "post_attention_norm.weight"), c.n_embd));
        TS_ASSIGN_OR_RETURN(w.post_ffn_norm, vector_f32(f, layer_name(l, "post_ffw_norm.weight"), c.n_embd));
    }
    return Status();
}

}  // namespace

Expected<ModelWeights> ModelWeights::bind(const GgufFile& f, ModelConfig& c) {
    ModelWeights w;
    if (f.find_tensor("rope_factors_long.weight") || f.find_tensor("rope_factors_short.weight")) {
        return Status::error("LongRoPE (rope_factors_long/short, phi3 128k models) is not supported yet");
    }
    TS_ASSIGN_OR_RETURN(w.token_embd, matrix(f, "token_embd.weight", c.n_embd, c.n_vocab));
    w.layers.resize(c.n_layer);
    for (int l = 0; l < c.n_layer; ++l) TS_RETURN_IF_ERROR(bind_layer(f, c, l, w.layers[l]));
    TS_ASSIGN_OR_RETURN(w.output_norm, vector_f32(f, "output_norm.weight", c.n_embd));
    if (f.find_tensor("output.weight")) {
        TS_ASSIGN_OR_RETURN(w.output, matrix(f, "output.weight", c.n_embd, c.n_vocab));
    } else {
        w.output = w.token_embd;
    }
    if (f.find_tensor("rope_freqs.weight")) {
        const float* factors = nullptr;
        TS_ASSIGN_OR_RETURN(factors, vector_f32(f, "rope_freqs.weight", c.rope.n_rot / 2));
        c.rope.freq_factors.assign(factors, factors + c.rope.n_rot / 2);
    }
    return w;
}

}  // namespace tessera
