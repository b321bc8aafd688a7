// AVX2 body of avx2_prepare_full_quads (the AVX-512 one is in
// act_quads_avx512.cpp; the same bytes as act_quads.cpp's plain loop). Per
// quad of blocks (a, b, c, d): qword unpacks and 128-bit permutes give the
// four qs fields (qword j of a, c, b, d), byte dots with ones and one
// widening each lane's sum of its 16 elements (the neg8 / neg128 offsets),
// and one fp16 convert the scales in lane order (a a c c b b d d). The
// plain loop was 1.8% of a 135M Q4_0 pp512 on an AVX2-only Zen 3 (perf,
// two threads).
#include "kernels/cpu/act_quads_x86.h"

#include "core/check.h"
#include "kernels/act_quads.h"
#include "tensor/quant_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {
namespace {

// Field f (32 bytes) of token `half` in quad q of a pair row of Quad.
template <class Quad>
__m256i* field(uint8_t* out, int64_t q, int half, int f) {
    return reinterpret_cast<__m256i*>(out + static_cast<size_t>(q) * 2 * sizeof(Quad) + 2 * kQuadField * f +
                                      kQuadField * half);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Stores the four qs fields of the quad of blocks x[0..4) and returns the
// per-lane sums of the 16 elements each lane covers (a a c c b b d d).
template <class Block, class Quad>
__m256i put_qs(const Block* x, uint8_t* out, int64_t q, int half) {
    const __m256i a = load256(x[0].qs), b = load256(x[1].qs), c = load256(x[2].qs), d = load256(x[3].qs);
    const __m256i ac_even = _mm256_unpacklo_epi64(a, c), ac_odd = _mm256_unpackhi_epi64(a, c);
    const __m256i bd_even = _mm256_unpacklo_epi64(b, d), bd_odd = _mm256_unpackhi_epi64(b, d);
    const __m256i f[4] = {_mm256_permute2x128_si256(ac_even, bd_even, 0x20),
                          _mm256_permute2x128_si256(ac_odd, bd_odd, 0x20),
                          _mm256_permute2x128_si256(ac_even, bd_even, 0x31),
                          _mm256_permute2x128_si256(ac_odd, bd_odd, 0x31)};
    // Byte pairs times 1 (|sum| <= 256), four fields added in int16, then
    // the pairs of each lane.
    const __m256i ones8 = _mm256_set1_epi8(1);
    __m256i s16 = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
        _mm256_storeu_si256(field<Quad>(out, q, half, j), f[j]);
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(ones8, f[j]));
    }
    return _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
}

// Four fp16 values (of blocks a, b, c, d) as floats in lane order a a c c b b d d.
inline __m256 lane_scales(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
    const auto w = [](uint16_t h) { return static_cast<short>(h); };
    return _mm256_cvtph_ps(_mm_setr_epi16(w(a), w(a), w(c), w(c), w(b), w(b), w(d), w(d)));
}

// -(2^k) * s, exactly (|s| <= 2048).
inline __m256i neg_shifted(__m256i s, int k) {
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_sll_epi32(s, _mm_cvtsi32_si128(k)));
}

void prepare_q8_0(int64_t quads, const BlockQ8_0* y, int half, uint8_t* out) {
    for (int64_t q = 0; q < quads; ++q) {
        const BlockQ8_0* x = y + q * kQuadBlocks;
        const __m256i sum = put_qs<BlockQ8_0, ActQuad>(x, out, q, half);
        _mm256_storeu_si256(field<ActQuad>(out, q, half, 4), neg_shifted(sum, 3));
        _mm256_storeu_si256(field<ActQuad>(out, q, half, 5), neg_shifted(sum, 7));
        _mm256_storeu_ps(reinterpret_cast<float*>(field<ActQuad>(out, q, half, 6)),
                         lane_scales(x[0].d, x[1].d, x[2].d, x[3].d));
    }
}

void prepare_q8_1(int64_t quads, const BlockQ8_1* y, int half, uint8_t* out) {
    const __m256 first_lanes = _mm256_castsi256_ps(_mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0));
    for (int64_t q = 0; q < quads; ++q) {
        const BlockQ8_1* x = y + q * kQuadBlocks;
        put_qs<BlockQ8_1, ActQuadQ8_1>(x, out, q, half);
        _mm256_storeu_ps(reinterpret_cast<float*>(field<ActQuadQ8_1>(out, q, half, 4)),
                         lane_scales(x[0].d, x[1].d, x[2].d, x[3].d));
        _mm256_storeu_ps(reinterpret_cast<float*>(field<ActQuadQ8_1>(out, q, half, 5)),
                         _mm256_and_ps(lane_scales(x[0].s, x[1].s, x[2].s, x[3].s), first_lanes));
    }
}

}  // namespace

int64_t avx2_prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out) {
    static_assert(offsetof(ActQuad, neg8) == 4 * kQuadField && offsetof(ActQuad, neg128) == 5 * kQuadField &&
                  offsetof(ActQuad, d) == 6 * kQuadField);
    static_assert(offsetof(ActQuadQ8_1, d) == 4 * kQuadField && offsetof(ActQuadQ8_1, s) == 5 * kQuadField);
    const int64_t quads = nb / kQuadBlocks;
    if (act == GgmlType::Q8_0) {
        prepare_q8_0(quads, reinterpret_cast<const BlockQ8_0*>(q_row), half, out);
    } else {
        TS_CHECK(act == GgmlType::Q8_1);
        prepare_q8_1(quads, reinterpret_cast<const BlockQ8_1*>(q_row), half, out);
    }
    return quads;
}

}  // namespace tessera::x86
#pragma GCC pop_options
#else
namespace tessera::x86 {
int64_t avx2_prepare_full_quads(GgmlType, int64_t, const uint8_t*, int, uint8_t*) {
    TS_CHECK_MSG(false, "x86 only");
    return 0;
}
}  // namespace tessera::x86
#endif
