// RMSNorm with a double-precision sum of squares, as llama.cpp accumulates it,
// so long rows do not lose precision.
#include "kernels/rmsnorm.h"

#include <cmath>

namespace tessera {

void rmsnorm(const float* x, const float* w, float* y, int64_t n_rows, int64_t n, float eps) {
    for (int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        double sum = 0.0;
        for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(xr[k]) * xr[k];
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
        for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] * scale * w[k];
    }
}

}  // namespace tessera
