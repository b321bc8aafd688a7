// Elementwise activations used by feed-forward blocks.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

// gate[k] = silu(gate[k]) * up[k]: the SwiGLU combination.
inline void swiglu_inplace(float* gate, const float* up, int64_t n) {
    for (int64_t k = 0; k < n; ++k) gate[k] = silu(gate[k]) * up[k];
}

// out[k] += in[k]: residual connections.
inline void add_inplace(float* out, const float* in, int64_t n) {
    for (int64_t k = 0; k < n; ++k) out[k] += in[k];
}

}  // namespace tessera
