// Views of a model's tensors inside the GGUF mapping (no copies), checked for
// presence, shape and type against the ModelConfig at load time.
#pragma once

#include <vector>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/model_config.h"

namespace tessera {

// phi3 stores Q/K/V as one attn_qkv matrix and gate/up as one ffn_up matrix
// of 2 * n_ff rows; wq/wk/wv and w_gate/w_up are then row ranges of those.
struct LayerWeights {
    const float* attn_norm = nullptr;  // [n_embd]
    WeightMatrix wq, wk, wv;           // [q_dim|kv_dim rows, n_embd cols]
    const float* bq = nullptr;         // [q_dim] (qwen2) or null
    const float* bk = nullptr;         // [kv_dim]
    const float* bv = nullptr;         // [kv_dim]
    const float* q_norm = nullptr;     // [head_dim] (qk_norm) or null
    const float* k_norm = nullptr;     // [head_dim]
    WeightMatrix wo;                   // [n_embd rows, q_dim cols]
    const float* post_attn_norm = nullptr;  // [n_embd] (gemma) or null
    const float* ffn_norm = nullptr;   // [n_embd]
    WeightMatrix w_gate, w_up;         // [n_ff rows, n_embd cols]
    WeightMatrix w_down;               // [n_embd rows, n_ff cols]
    const float* post_ffn_norm = nullptr;  // [n_embd] (gemma) or null
};

struct ModelWeights {
    WeightMatrix token_embd;           // [n_vocab rows, n_embd cols]
    std::vector<LayerWeights> layers;
    const float* output_norm = nullptr;  // [n_embd]
    WeightMatrix output;               // [n_vocab rows, n_embd cols]; token_embd when tied

    // Also fills cfg.rope.freq_factors from rope_freqs.weight when present.
    static Expected<ModelWeights> bind(const GgufFile& file, ModelConfig& cfg);
};

}  // namespace tessera
