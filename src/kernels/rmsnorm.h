// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w, row by row.
#pragma once

#include <cstdint>

namespace tessera {

// x and y: [n_rows, n]; w: [n]. x and y may alias.
void rmsnorm(const float* x, const float* w, float* y, int64_t n_rows, int64_t n, float eps);

}  // namespace tessera
