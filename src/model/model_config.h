// Hyperparameters of a decoder-only transformer, read once from GGUF metadata
// and validated, then passed down explicitly. Names follow GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "kernels/rope.h"
#include "model/moe_router.h"

namespace tessera {

// The forward graph a model runs (model/arch_*.cpp, one file per family).
// llama with expert_count > 0 (mixtral) stays Llama: is_moe() tells them apart.
enum class ArchKind {
    Llama, Qwen2, Qwen3, Gemma2, Gemma3, Phi3, Qwen2Moe, Qwen3Moe, Olmoe, Granite, GraniteMoe, Olmo2, SmolLM3, Mistral3,
    GptOss
};

struct ModelConfig {
    std::string arch;  // "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "qwen2moe", "qwen3moe", "olmoe",
                       // "granite", "granitemoe", "olmo2", "smollm3", "mistral3", "gpt-oss"
    ArchKind kind = ArchKind::Llama;
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;
    int32_t n_ff = 0;
    float norm_eps = 1e-5f;
    bool qkv_bias = false;  // qwen2
    bool qk_norm = false;   // per-head RMSNorm of Q and K before RoPE: qwen3, gemma3, qwen3moe
    bool qk_norm_full = false;  // RMSNorm of the whole Q and K projections instead (olmoe, olmo2)
    RopeParams rope;        // freq_factors filled from the rope_freqs tensor if present
    float attn_scale = 0;   // query scale, 1/sqrt(head_dim) unless the architecture says otherwise
    // Layers without RoPE (smollm3): every nope_period-th layer (0 = none).
    // GGUF has no key for it: llama.cpp fixes smollm3's period at 4.
    int32_t nope_period = 0;
    // Query temperature (mistral3, Llama 4's scaling): after RoPE, the query
    // of position pos is multiplied by 1 + attn_temp_scale * ln(1 +
    // floor(pos / attn_temp_length)). 0 = off.
    float attn_temp_scale = 0;
    int32_t attn_temp_length = 0;
    // Multipliers (1 = none): embeddings times embedding_scale (gemma:
    // sqrt(n_embd); granite: its key), each residual branch times
    // residual_scale and the logits divided by logit_scale (granite).
    float embedding_scale = 1.0f;
    float residual_scale = 1.0f;
    float logit_scale = 1.0f;

    // Gemma2/3 only (0 = off for the others).
    float attn_softcap = 0;     // attention logit soft-capping (gemma2)
    float final_softcap = 0;    // output logit soft-capping (gemma2)
    // Sliding-window layers (gemma2/3, gpt-oss; 0 = none).
    int32_t sliding_window = 0; // positions a local layer's query sees, itself included
    int32_t swa_period = 0;     // every swa_period-th layer is global, the others local
    RopeParams rope_local;      // RoPE of the local layers (gemma3: base 10000, unscaled)

    // Mixture of experts (n_expert = 0: a dense FFN). Each layer routes every
    // token to n_expert_used of n_expert SwiGLU experts of n_ff_exp rows
    // (model/moe_router.h, model/moe_ffn.h); qwen2moe adds a shared expert of
    // n_ff_shexp rows gated by sigmoid(ffn_gate_inp_shexp · x).
    int32_t n_expert = 0;
    int32_t n_expert_used = 0;
    int32_t n_ff_exp = 0;
    int32_t n_ff_shexp = 0;  // 0: no shared expert
    ExpertGating expert_gating = ExpertGating::Softmax;
    bool expert_weights_norm = false;  // renormalise the top-k weights (qwen3moe, mixtral, gpt-oss)
    // gpt-oss: attention output bias, attention sinks, router and expert
    // biases, and its clamped SwiGLU (model/moe_ffn.h) when swiglu_limit > 0:
    // out = (clamp(up, -limit, limit) + 1) * g * sigmoid(swiglu_alpha * g),
    // g = min(gate, limit). 0 = the plain SwiGLU.
    float swiglu_limit = 0;
    float swiglu_alpha = 0;

    bool is_moe() const { return n_expert > 0; }
    int32_t kv_dim() const { return n_head_kv * head_dim; }
    int32_t q_dim() const { return n_head * head_dim; }
    bool is_gemma() const { return kind == ArchKind::Gemma2 || kind == ArchKind::Gemma3; }
    bool is_nope_layer(int layer) const { return nope_period > 0 && (layer + 1) % nope_period == 0; }
    // A sliding-window ("local") layer: gemma2 and gpt-oss layers 0, 2, 4...;
    // gemma3 every layer but 5, 11, 17...
    bool is_local_layer(int layer) const {
        return swa_period > 0 && sliding_window > 0 && (layer + 1) % swa_period != 0;
    }

    static Expected<ModelConfig> from_gguf(const GgufFile& file);

    // The key parameters, one "name: value" per line (`tessera info`).
    std::string describe() const;
};

}  // namespace tessera
