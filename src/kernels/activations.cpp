// SwiGLU dispatch (the row kernel table's vector code, or the scalar
// reference), and the scalar GeGLU and soft-capping.
#include "kernels/activations.h"

#include "kernels/row_kernels.h"

namespace tessera {

void swiglu_inplace(float* gate, const float* up, int64_t n, SimdLevel level) {
    if (const RowKernels* rk = find_row_kernels(level)) {
        rk->swiglu(gate, up, n);
        return;
    }
    for (int64_t k = 0; k < n; ++k) gate[k] = silu(gate[k]) * up[k];
}

void geglu_inplace(float* gate, const float* up, int64_t n) {
    for (int64_t k = 0; k < n; ++k) gate[k] = gelu_tanh(gate[k]) * up[k];
}

void softcap_inplace(float* x, int64_t n, float cap) {
    for (int64_t k = 0; k < n; ++k) x[k] = cap * std::tanh(x[k] / cap);
}

}  // namespace tessera
