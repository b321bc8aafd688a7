// Per-format entry points behind the type switch in quant.cpp. Internal to
// tensor/: callers use quant.h. nb is always a count of blocks.
#pragma once

#include <cmath>
#include <cstdint>

#include "tensor/quant_blocks.h"

namespace tessera::quant_detail {

// An activation quantizer's value: v rounded half to even, and -128 where
// v is NaN or beyond the int range (a NaN element, an infinity times a zero
// inverse scale, a block of subnormals whose inverse scale overflows).
// x86's float-to-int conversion gives INT_MIN there, which the SIMD
// quantizers make -128; a plain cast would be undefined behaviour.
inline int quantized_value(float v) {
    return std::fabs(v) < 2147483648.0f ? static_cast<int>(std::nearbyint(v)) : -128;
}

// Legacy 32-element formats (quant_legacy.cpp).
void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb);
void dequantize_q4_1(const BlockQ4_1* x, float* y, int64_t nb);
void dequantize_q5_0(const BlockQ5_0* x, float* y, int64_t nb);
void dequantize_q5_1(const BlockQ5_1* x, float* y, int64_t nb);
void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb);
void dequantize_q8_1(const BlockQ8_1* x, float* y, int64_t nb);

void quantize_q4_0_ref(const float* x, BlockQ4_0* y, int64_t nb);
void quantize_q4_1_ref(const float* x, BlockQ4_1* y, int64_t nb);
void quantize_q5_0_ref(const float* x, BlockQ5_0* y, int64_t nb);
void quantize_q5_1_ref(const float* x, BlockQ5_1* y, int64_t nb);
void quantize_q8_0_ref(const float* x, BlockQ8_0* y, int64_t nb);
void quantize_q8_0_act(const float* x, BlockQ8_0* y, int64_t nb);
void quantize_q8_1_act(const float* x, BlockQ8_1* y, int64_t nb);

float dot_q4_0_q8_0(const BlockQ4_0* x, const BlockQ8_0* y, int64_t nb);
float dot_q4_1_q8_1(const BlockQ4_1* x, const BlockQ8_1* y, int64_t nb);
float dot_q5_0_q8_0(const BlockQ5_0* x, const BlockQ8_0* y, int64_t nb);
float dot_q5_1_q8_1(const BlockQ5_1* x, const BlockQ8_1* y, int64_t nb);
float dot_q8_0_q8_0(const BlockQ8_0* x, const BlockQ8_0* y, int64_t nb);

// K-quants (quant_kquants.cpp).
void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb);
void dequantize_q5_k(const BlockQ5_K* x, float* y, int64_t nb);
void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb);
void dequantize_q8_k(const BlockQ8_K* x, float* y, int64_t nb);
void quantize_q8_k(const float* x, BlockQ8_K* y, int64_t nb);

// Low-bit K-quants (quant_kquants_low.cpp).
void dequantize_q2_k(const BlockQ2_K* x, float* y, int64_t nb);
void dequantize_q3_k(const BlockQ3_K* x, float* y, int64_t nb);
float dot_q2_k_q8_k(const BlockQ2_K* x, const BlockQ8_K* y, int64_t nb);
float dot_q3_k_q8_k(const BlockQ3_K* x, const BlockQ8_K* y, int64_t nb);

// Weighted least-squares scale searches (quant_fit.cpp). Several inverse
// scales around the one that maps the range onto the levels are tried; each
// rounding gets its least-squares scale (and minimum) and the smallest
// weighted squared error wins.
struct AffineFit {
    float scale = 0.0f;
    float min = 0.0f;  // subtracted: x ~ scale * q - min, min >= 0
};
// x ~ a*q - m (m >= 0) with q in [0, nmax].
AffineFit fit_affine(const float* x, const float* w, int n, int nmax);
// x ~ a*q with q in [-nmax, nmax - 1]: the element of largest magnitude
// goes to -nmax, using the wider side.
float fit_symmetric(const float* x, const float* w, int n, int nmax);
// v rounded to nearest and clamped to [lo, hi]; NaN and infinities give lo.
int round_clamp(float v, int lo, int hi);
// Each element's weight in the searches' squared error: its magnitude plus
// the group's RMS (so small elements still count), times importance[i] when
// importance is not null (an importance matrix's mean squared input of the
// element's column: quantize/imatrix.h).
void element_weights(const float* x, int n, const float* importance, float* w);
// importance + n, or null when importance is null (arithmetic on null is undefined).
inline const float* importance_at(const float* importance, int64_t n) {
    return importance != nullptr ? importance + n : nullptr;
}

// Weight quantization into the K-quants by scale search
// (quant_kquants_search.cpp) and into the legacy formats by the same search
// when an importance matrix is given (quant_legacy.cpp). `importance` is
// null or holds one weight per element of x.
void quantize_q2_k_ref(const float* x, BlockQ2_K* y, int64_t nb, const float* importance);
void quantize_q3_k_ref(const float* x, BlockQ3_K* y, int64_t nb, const float* importance);
void quantize_q4_k_ref(const float* x, BlockQ4_K* y, int64_t nb, const float* importance);
void quantize_q5_k_ref(const float* x, BlockQ5_K* y, int64_t nb, const float* importance);
void quantize_q6_k_ref(const float* x, BlockQ6_K* y, int64_t nb, const float* importance);
void quantize_q4_0_weighted(const float* x, BlockQ4_0* y, int64_t nb, const float* importance);
void quantize_q4_1_weighted(const float* x, BlockQ4_1* y, int64_t nb, const float* importance);
void quantize_q5_0_weighted(const float* x, BlockQ5_0* y, int64_t nb, const float* importance);
void quantize_q5_1_weighted(const float* x, BlockQ5_1* y, int64_t nb, const float* importance);

float dot_q4_k_q8_k(const BlockQ4_K* x, const BlockQ8_K* y, int64_t nb);
float dot_q5_k_q8_k(const BlockQ5_K* x, const BlockQ8_K* y, int64_t nb);
float dot_q6_k_q8_k(const BlockQ6_K* x, const BlockQ8_K* y, int64_t nb);

// Codebook formats (quant_codebook.cpp).
void dequantize_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t nb);
void dequantize_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t nb);
void dequantize_mxfp4(const BlockMXFP4* x, float* y, int64_t nb);
float dot_iq4_nl_q8_0(const BlockIQ4_NL* x, const BlockQ8_0* y, int64_t nb);
float dot_iq4_xs_q8_k(const BlockIQ4_XS* x, const BlockQ8_K* y, int64_t nb);
float dot_mxfp4_q8_0(const BlockMXFP4* x, const BlockQ8_0* y, int64_t nb);
void quantize_iq4_nl_ref(const float* x, BlockIQ4_NL* y, int64_t nb, const float* importance);
void quantize_iq4_xs_ref(const float* x, BlockIQ4_XS* y, int64_t nb, const float* importance);
void quantize_mxfp4_ref(const float* x, BlockMXFP4* y, int64_t nb);

}  // namespace tessera::quant_detail
