// RMSNorm with a double-precision sum of squares, as llama.cpp accumulates it,
// so long rows do not lose precision.
#include "kernels/rmsnorm.h"

#include <cmath>

#include "kernels/row_kernels.h"

namespace tessera {
namespace {

double sum_squares_ref(const float* x, int64_t n) {
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(x[k]) * x[k];
    return sum;
}

}  // namespace

void rmsnorm(const float* x, const float* w, float* y, int64_t n_rows, int64_t n, float eps, SimdLevel level) {
    const RowKernels* rk = find_row_kernels(level);
    for (int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const double sum = rk != nullptr ? rk->sum_squares(xr, n) : sum_squares_ref(xr, n);
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
        for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] * scale * w[k];
    }
}

}  // namespace tessera
