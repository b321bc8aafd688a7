// Scalar reference (de)quantization and dot products for the GGUF weight
// formats tessera runs. Everything here is the slow, obviously-correct
// version: the SIMD kernels in kernels/ are tested against it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"

namespace tessera {

// True for the weight formats tessera can dequantize and multiply:
// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_NL, IQ4_XS, MXFP4.
bool is_supported_weight_type(GgmlType t);

// Elements per block of a supported (weight or activation) type.
int64_t block_elems(GgmlType t);

// dst[0..n) = the values encoded by n elements of src. n must be a multiple of
// the block size of t; t must be a supported weight type (or Q8_0/Q8_1/Q8_K).
void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n);

// The format activations are quantized to before a dot product with weights of
// type `weight`; the same choice as llama.cpp's CPU backend (its vec_dot_type):
// Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4 -> Q8_0, Q4_1/Q5_1 -> Q8_1, K-quants and
// IQ4_XS -> Q8_K, F16 -> F16,
// BF16 -> BF16, F32 -> F32.
GgmlType activation_type_for(GgmlType weight);

// Quantizes n activations into act_type (Q8_0, Q8_1, Q8_K, F16, BF16, F32).
// Q8_0/Q8_1 follow llama.cpp's x86 (AVX/AVX2) quantizer, which is what runs on
// the machines we compare against: scale d = amax/127, multiplier 127/amax,
// round half to even. (ggml's portable *_ref code uses 1/d and round half away
// from zero; quantize_row_weights below follows that one.) Q8_K follows ggml's
// quantize_row_q8_K_ref, which its x86 build also uses.
void quantize_row(GgmlType act_type, const float* x, void* dst, int64_t n);

// Weight quantization into any supported weight type (is_supported_weight_type;
// callers check it first). Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and F32/F16/BF16 round
// to nearest exactly as ggml's reference quantizers and gguf-py's gguf.quants
// do, and so does MXFP4 (as gguf-py's); the K-quants, IQ4_NL and IQ4_XS
// search each (sub-)block's scale (and minimum) for the least weighted
// squared error (quant_kquants_search.cpp, quant_codebook.cpp), in the spirit
// of ggml's quantizers but not bit-identical to them.
// `importance` (null, or n values >= 0: an importance matrix's mean squared
// input of each element's column, quantize/imatrix.h) weights each element's
// error in those searches; Q4_0, Q4_1, Q5_0 and Q5_1 then search their scale
// (and minimum) the same way instead of rounding to nearest. Q8_0, MXFP4 and
// the float types ignore it.
void quantize_row_weights(GgmlType t, const float* x, void* dst, int64_t n, const float* importance = nullptr);
// Whether quantize_row_weights into t uses `importance`.
bool uses_importance(GgmlType t);

// Dot product of n weights of type `weight` with n activations already
// quantized to activation_type_for(weight). Scalar reference: integer sums per
// block, combined in float in block order (F32/F16/BF16 accumulate in double).
float vec_dot(GgmlType weight, int64_t n, const void* w_row, const void* act_row);

}  // namespace tessera
