// Hyperparameters of a decoder-only transformer, read once from GGUF metadata
// and validated, then passed down explicitly. Names follow GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "gguf/gguf_file.h"
#include "kernels/rope.h"

namespace tessera {

struct ModelConfig {
    std::string arch;  // "llama", "qwen2", ...
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
    RopeParams rope;        // freq_factors filled from the rope_freqs tensor if present

    int32_t kv_dim() const { return n_head_kv * head_dim; }
    int32_t q_dim() const { return n_head * head_dim; }

    static Expected<ModelConfig> from_gguf(const GgufFile& file);
};

}  // namespace tessera
