// Views of a model's tensors inside the GGUF mapping (no copies), checked for
// presence, shape and type against the ModelConfig at load time.
#pragma once

#include <vector>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/model_config.h"

namespace tessera {

// A mixture-of-experts layer's FFN (ModelConfig::n_expert > 0). GGUF keeps
// each kind of expert matrix as one 3-D tensor, n_expert 2-D matrices back to
// back; each expert here is a view of its slice.
struct ExpertWeights {
    WeightMatrix gate_inp;                     // router: [n_expert rows, n_embd cols]
    const float* selection_bias = nullptr;     // exp_probs_b [n_expert] or null
    // gpt-oss (all null for the others): the router's bias, added to its
    // logits, and each expert's output biases, expert after expert.
    const float* gate_inp_bias = nullptr;      // [n_expert]
    const float* gate_bias = nullptr;          // [n_expert, n_ff_exp]
    const float* up_bias = nullptr;            // [n_expert, n_ff_exp]
    const float* down_bias = nullptr;          // [n_expert, n_embd]
    std::vector<WeightMatrix> gate, up;        // [n_expert] x [n_ff_exp rows, n_embd cols]
    std::vector<WeightMatrix> down;            // [n_expert] x [n_embd rows, n_ff_exp cols]
    // qwen2moe's shared expert (all null when ModelConfig::n_ff_shexp == 0).
    WeightMatrix gate_inp_shexp;               // [1 row, n_embd cols]
    WeightMatrix gate_shexp, up_shexp;         // [n_ff_shexp rows, n_embd cols]
    WeightMatrix down_shexp;                   // [n_embd rows, n_ff_shexp cols]
};

// phi3 stores Q/K/V as one attn_qkv matrix and gate/up as one ffn_up matrix
// of 2 * n_ff rows; wq/wk/wv and w_gate/w_up are then row ranges of those.
struct LayerWeights {
    const float* attn_norm = nullptr;  // [n_embd] (null for olmo2: post-norms only)
    WeightMatrix wq, wk, wv;           // [q_dim|kv_dim rows, n_embd cols]
    const float* bq = nullptr;         // [q_dim] (qwen2) or null
    const float* bk = nullptr;         // [kv_dim]
    const float* bv = nullptr;         // [kv_dim]
    const float* q_norm = nullptr;     // [head_dim] (qk_norm) or null
    const float* k_norm = nullptr;     // [head_dim]
    WeightMatrix wo;                   // [n_embd rows, q_dim cols]
    const float* bo = nullptr;         // [n_embd] (gpt-oss) or null
    const float* attn_sinks = nullptr; // [n_head] (gpt-oss) or null: kernels/attention.h
    const float* post_attn_norm = nullptr;  // [n_embd] (gemma, olmo2) or null
    const float* ffn_norm = nullptr;   // [n_embd] (null for olmo2; gpt-oss's post_attention_norm)
    WeightMatrix w_gate, w_up;         // [n_ff rows, n_embd cols] (dense FFN only)
    WeightMatrix w_down;               // [n_embd rows, n_ff cols]
    ExpertWeights moe;                 // MoE FFN only
    const float* post_ffn_norm = nullptr;  // [n_embd] (gemma, olmo2) or null
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
