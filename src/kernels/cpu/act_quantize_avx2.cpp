// AVX2 body of avx2_quantize_act: per block amax, d = amax / 127, and
// round-half-to-even of x * (127 / amax), exactly as the scalar quantizer;
// for Q8_K the element of largest magnitude maps to -127 and the per-16
// sums follow.
#include "kernels/cpu/act_quantize_x86.h"

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>


#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {
namespace {

// Quantizes 32 floats into qs; returns d and, if kSum (Q8_1), the sum of the
// quantized values.
template <bool kSum>
float quantize_block(const float* x, int8_t* qs, int* sum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4], amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
        v[k] = _mm256_loadu_ps(x + 8 * k);
        // max(|x|, acc) keeps acc when x is NaN, like the scalar std::max.
        amax = _mm256_max_ps(_mm256_andnot_ps(sign, v[k]), amax);
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float a = _mm_cvtss_f32(m);
    const float d = a / 127.0f;
    const __m256 id = _mm256_set1_ps(a != 0.0f ? 127.0f / a : 0.0f);
    // Round to nearest even (the default MXCSR mode, as nearbyint); a NaN
    // or out-of-range product converts to INT_MIN, which the max makes -128
    // as the reference's quantized_value does, sums included.
    __m256i q[4];
    const __m256i lowest = _mm256_set1_epi32(-128);
    for (int k = 0; k < 4; ++k) q[k] = _mm256_max_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(v[k], id)), lowest);
    if constexpr (kSum) {
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        *sum = _mm_cvtsi128_si32(s4);
    }
    // -128 <= q <= 127, so the saturating packs are exact; they interleave 128-bit
    // lanes, which the permute undoes.
    const __m256i p16a = _mm256_packs_epi32(q[0], q[1]), p16b = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b),
                                                   _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), p8);
    return d;
}

// fp32_to_fp16 by F16C: round to nearest even as well, and the same bits for
// every finite value and infinity (a scale is never NaN: amax skips NaNs).
inline uint16_t to_fp16(float f) { return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

// 256 floats -> one Q8_K block, the bytes quantize_row writes.
void quantize_super(const float* x, BlockQ8_K& y) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < kQKK / 8; ++k) amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), amax);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float a = _mm_cvtss_f32(m);
    if (a == 0.0f) {
        y = BlockQ8_K{};
        return;
    }
    // The first element of that magnitude sets the sign, as in the scalar
    // scan; eight at a time (one at a time was most of this function's time).
    const __m256 av = _mm256_set1_ps(a);
    int e = 0;
    for (int k = 0; k < kQKK; k += 8) {  // a is some |x[e]|: always found
        const __m256 eq = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)), av, _CMP_EQ_OQ);
        const int hits = _mm256_movemask_ps(eq);
        if (hits != 0) {
            e = k + __builtin_ctz(static_cast<unsigned>(hits));
            break;
        }
    }
    const float iscale = -127.0f / x[e];
    const __m256 id = _mm256_set1_ps(iscale);
    for (int k = 0; k < kQKK / 32; ++k) {
        __m256i q[4];  // round to nearest even (the MXCSR default, as nearbyint)
        for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * k + 8 * i), id));
        // The saturating packs also clamp at 127, as the scalar min does.
        const __m256i p16a = _mm256_packs_epi32(q[0], q[1]), p16b = _mm256_packs_epi32(q[2], q[3]);
        const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b),
                                                       _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y.qs + 32 * k), p8);
    }
    // Sums of 16: per 32 bytes, four partial sums of each half (two
    // groups), then two horizontal adds of four such vectors leave groups
    // (0 2 4 6 | 1 3 5 7) of those 128 bytes.
    __m256i g[2];
    for (int h = 0; h < 2; ++h) {
        __m256i p[4];
        for (int k = 0; k < 4; ++k) {
            const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs + 128 * h + 32 * k));
            p[k] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), b), _mm256_set1_epi16(1));
        }
        const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
        g[h] = _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
    const __m256i sums = _mm256_permute4x64_epi64(_mm256_packs_epi32(g[0], g[1]), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y.bsums), sums);
    y.d = 1.0f / iscale;
}

}  // namespace

void avx2_quantize_act(GgmlType act_type, const float* x, uint8_t* dst, int64_t n) {
    if (act_type == GgmlType::Q8_K) {
        TS_CHECK(n % kQKK == 0);
        auto* y = reinterpret_cast<BlockQ8_K*>(dst);
        for (int64_t i = 0; i < n / kQKK; ++i) quantize_super(x + i * kQKK, y[i]);
        return;
    }
    TS_CHECK(n % kQK == 0);
    const int64_t nb = n / kQK;
    int sum = 0;
    if (act_type == GgmlType::Q8_0) {
        auto* y = reinterpret_cast<BlockQ8_0*>(dst);
        for (int64_t i = 0; i < nb; ++i) y[i].d = to_fp16(quantize_block<false>(x + i * kQK, y[i].qs, &sum));
        return;
    }
    TS_CHECK(act_type == GgmlType::Q8_1);
    auto* y = reinterpret_cast<BlockQ8_1*>(dst);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = quantize_block<true>(x + i * kQK, y[i].qs, &sum);
        y[i].d = to_fp16(d);
        y[i].s = to_fp16(d * static_cast<float>(sum));
    }
}

}  // namespace tessera::x86
#pragma GCC pop_options
#else
namespace tessera::x86 {
void avx2_quantize_act(GgmlType, const float*, uint8_t*, int64_t) { TS_CHECK_MSG(false, "x86 only"); }
}  // namespace tessera::x86
#endif
