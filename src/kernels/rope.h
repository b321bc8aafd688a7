// Rotary position embedding with the scaling variants GGUF models use:
// linear (position interpolation), YaRN, and per-dimension frequency factors
// (Llama 3's scaling, stored as the rope_freqs tensor).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

enum class RopeStyle {
    Normal,  // rotate adjacent pairs (x[2i], x[2i+1]): llama, mistral
    Neox,    // rotate halves (x[i], x[i + n_rot/2]): qwen2, gemma, neox
};

struct RopeParams {
    RopeStyle style = RopeStyle::Normal;
    int n_rot = 0;              // rotated dimensions per head (<= head_dim)
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;    // 1 / scaling factor
    float ext_factor = 0.0f;    // YaRN extrapolation mix (0 = off)
    float attn_factor = 1.0f;   // YaRN magnitude scale
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
    int n_ctx_orig = 0;         // training context before scaling (YaRN)
    // YaRN's ramp ends rounded out to whole dimensions (floor/ceil), as
    // llama.cpp always does and Hugging Face does unless the config says
    // "truncate": false (gpt-oss, whose GGUF carries no key for it).
    bool yarn_truncate = true;
    std::vector<float> freq_factors;  // [n_rot/2] or empty
};

// Precomputed cos/sin for one position, [n_rot/2] each.
struct RopeTable {
    std::vector<float> cos, sin;
};

void rope_table(const RopeParams& p, int64_t pos, RopeTable& out);

// Rotates every head of one token in place. x: [n_heads, head_dim].
void rope_apply(const RopeParams& p, const RopeTable& t, float* x, int n_heads, int head_dim);

}  // namespace tessera
