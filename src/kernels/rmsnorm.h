// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w, row by row.
#pragma once

#include <cstdint>

#include "kernels/dot_kernels.h"

namespace tessera {

// x and y: [n_rows, n]; w: [n]. x and y may alias. The sum of squares is in
// double; the SIMD levels add it in another order than Scalar (the
// reference), so a result may differ from it in the last bit.
void rmsnorm(const float* x, const float* w, float* y, int64_t n_rows, int64_t n, float eps,
             SimdLevel level = best_simd_level());

}  // namespace tessera
