// Float rows into a storage or activation type (KV cache rows, matmul
// activations), and F16 / BF16 rows back into floats: SIMD where the level
// has it, and at every level the bytes of the scalar reference quantize_row
// (tensor/quant.h) / dequantize_row.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"
#include "kernels/dot_kernels.h"

namespace tessera {

// Writes n floats from x as n elements of the chosen type at dst. n must be a
// multiple of the type's block size (32 for Q8_0 and Q8_1).
using ConvertRowFn = void (*)(const float* x, void* dst, int64_t n);

// The converter to `t` (F32, F16, BF16, Q8_0, Q8_1 or Q8_K) at `level`.
ConvertRowFn find_convert_row(GgmlType t, SimdLevel level = best_simd_level());

// Writes the n F16 or BF16 (`t`) elements at src as floats at dst (exact:
// the matmul's widened activations for F16 and BF16 weights,
// ActLayout::Widened).
using WidenRowFn = void (*)(const void* src, float* dst, int64_t n);
WidenRowFn find_widen_row(GgmlType t, SimdLevel level = best_simd_level());

}  // namespace tessera
