// Shared body of the AVX2 and AVX-512 Q8_0 / Q8_1 pair-row preparation
// (act_quads_avx2.cpp, act_quads_avx512.cpp): everything but the qs fields'
// shuffle, which each file defines before including this one as
//   template <class Block, class Quad>
//   __m256i put_qs(const Block* x, uint8_t* out, int64_t q, int half);
// (stores the four qs fields of the quad of blocks x[0..4) and returns the
// per-lane sums of the 16 elements each lane covers, a a c c b b d d).
// Included inside an anonymous namespace under the file's target pragma.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "act_quads_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#define TESSERA_BODY_ACT_QUADS_X86 1

// Field f (32 bytes) of token `half` in quad q of a pair row of Quad.
template <class Quad>
__m256i* field(uint8_t* out, int64_t q, int half, int f) {
    return reinterpret_cast<__m256i*>(out + static_cast<size_t>(q) * 2 * sizeof(Quad) + 2 * kQuadField * f +
                                      kQuadField * half);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Four fp16 values (of blocks a, b, c, d) as floats in lane order a a c c b b d d.
inline __m256 lane_scales(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
    const auto w = [](uint16_t h) { return static_cast<short>(h); };
    return _mm256_cvtph_ps(_mm_setr_epi16(w(a), w(a), w(c), w(c), w(b), w(b), w(d), w(d)));
}

// -(2^k) * s, exactly (|s| <= 2048).
inline __m256i neg_shifted(__m256i s, int k) {
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_sll_epi32(s, _mm_cvtsi32_si128(k)));
}

template <class Block, class Quad>
__m256i put_qs(const Block* x, uint8_t* out, int64_t q, int half);

void prepare_q8_0(int64_t quads, const BlockQ8_0* y, int half, uint8_t* out) {
    static_assert(offsetof(ActQuad, neg8) == 4 * kQuadField && offsetof(ActQuad, neg128) == 5 * kQuadField &&
                  offsetof(ActQuad, d) == 6 * kQuadField);
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
    static_assert(offsetof(ActQuadQ8_1, d) == 4 * kQuadField && offsetof(ActQuadQ8_1, s) == 5 * kQuadField);
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

// The first nb / 4 quads of a Q8_0 or Q8_1 row; returns how many.
int64_t prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out) {
    const int64_t quads = nb / kQuadBlocks;
    if (act == GgmlType::Q8_0) {
        prepare_q8_0(quads, reinterpret_cast<const BlockQ8_0*>(q_row), half, out);
    } else {
        TS_CHECK(act == GgmlType::Q8_1);
        prepare_q8_1(quads, reinterpret_cast<const BlockQ8_1*>(q_row), half, out);
    }
    return quads;
}
