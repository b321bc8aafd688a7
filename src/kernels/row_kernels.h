// The SIMD kernels of the per-step work outside matmul and attention (SwiGLU,
// RMSNorm's sum of squares, F32 <-> F16 / BF16 rows, logits scans), as one
// table per SIMD level. Callers go through activations.h, rmsnorm.h,
// convert_row.h and logits_scan.h, which hold the scalar references.
#pragma once

#include <cstdint>

#include "kernels/dot_kernels.h"
#include "kernels/logits_scan.h"

namespace tessera {

struct RowKernels {
    // gate[k] = silu(gate[k]) * up[k]; every element takes the same vector
    // path wherever it sits, so results do not depend on n or alignment.
    void (*swiglu)(float* gate, const float* up, int64_t n);
    // sum of x[k]^2 in double: lane j of 16 sums elements k = j (mod 16) up
    // to the last full 16, then lanes 0..15 and the rest are added in order,
    // the same at every width.
    double (*sum_squares)(const float* x, int64_t n);
    // Bytes identical to fp32_to_fp16 / fp32_to_bf16 of each element.
    void (*to_f16)(const float* x, void* dst, int64_t n);
    void (*to_bf16)(const float* x, void* dst, int64_t n);
    // F16 / BF16 elements widened to floats (exact).
    void (*from_f16)(const void* src, float* dst, int64_t n);
    void (*from_bf16)(const void* src, float* dst, int64_t n);
    LogitsStats (*logits_stats)(const float* x, int64_t n);
    // The lowest k with x[k] == value, or -1.
    int64_t (*first_equal)(const float* x, int64_t n, float value);
};

// The table for `level` (at most best_simd_level()), nullptr for Scalar.
const RowKernels* find_row_kernels(SimdLevel level);

}  // namespace tessera
