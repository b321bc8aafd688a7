// Elementwise activations used by feed-forward blocks.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/dot_kernels.h"

namespace tessera {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

// gate[k] = silu(gate[k]) * up[k]: the SwiGLU combination. At the SIMD levels
// the exponential is a polynomial (kernels/cpu/vec_exp_body.h; a few ulp
// from std::exp, see kernels_activations_test.cpp) and an element's result
// does not depend on n or on where it sits; Scalar is the std::exp reference.
void swiglu_inplace(float* gate, const float* up, int64_t n, SimdLevel level = best_simd_level());

// GELU with the tanh approximation (PyTorch's gelu(approximate="tanh")),
// the gate activation of gemma's feed-forward blocks.
inline float gelu_tanh(float x) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

// gate[k] = gelu_tanh(gate[k]) * up[k]: the GeGLU combination. Scalar only
// (std::tanh) for now; a vector version is a later step.
void geglu_inplace(float* gate, const float* up, int64_t n);

// x[k] = cap * tanh(x[k] / cap): soft-capping of final logits (gemma2).
void softcap_inplace(float* x, int64_t n, float cap);

// out[k] += in[k]: residual connections. Left to the compiler, which
// vectorizes it for whatever ISA the build targets.
inline void add_inplace(float* out, const float* in, int64_t n) {
    for (int64_t k = 0; k < n; ++k) out[k] += in[k];
}

}  // namespace tessera
