// AVX-512 build of avx512_prepare_full_quads (the rest shared with the AVX2
// one in act_quads_x86_body.h). Per quad of blocks (a, b, c, d): two qword
// permutes give the four qs fields (qword j of a, c, b, d), chained byte
// dots with ones give each lane's sum of its 16 elements (the neg8 /
// neg128 offsets), and one fp16 convert the scales in lane order
// (a a c c b b d d). The plain C++ loop of act_quads.cpp was 3% of a 135M
// Q4_0 pp512, one thread. Q8_K super-blocks: a dword transpose
// (prepare_super), where the plain loop was 1% of a 135M Q4_K pp512.
#include "kernels/cpu/act_quads_x86.h"

#include "core/check.h"
#include "kernels/act_quads.h"
#include "tensor/quant_blocks.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized once inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")

namespace tessera::x86 {
namespace {

#include "kernels/cpu/act_quads_x86_body.h"

// qs field j = qword j of a, c, b, d: fields 0 | 1 and 2 | 3 by two
// two-source qword permutes; chained byte dots with ones give the lane sums.
template <class Block, class Quad>
__m256i put_qs(const Block* x, uint8_t* out, int64_t q, int half) {
    const __m512i ab = _mm512_inserti64x4(_mm512_castsi256_si512(load256(x[0].qs)), load256(x[1].qs), 1);
    const __m512i cd = _mm512_inserti64x4(_mm512_castsi256_si512(load256(x[2].qs)), load256(x[3].qs), 1);
    const __m512i f01 = _mm512_permutex2var_epi64(ab, _mm512_setr_epi64(0, 8, 4, 12, 1, 9, 5, 13), cd);
    const __m512i f23 = _mm512_permutex2var_epi64(ab, _mm512_setr_epi64(2, 10, 6, 14, 3, 11, 7, 15), cd);
    _mm256_storeu_si256(field<Quad>(out, q, half, 0), _mm512_castsi512_si256(f01));
    _mm256_storeu_si256(field<Quad>(out, q, half, 1), _mm512_extracti64x4_epi64(f01, 1));
    _mm256_storeu_si256(field<Quad>(out, q, half, 2), _mm512_castsi512_si256(f23));
    _mm256_storeu_si256(field<Quad>(out, q, half, 3), _mm512_extracti64x4_epi64(f23, 1));
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i s = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, f01), ones, f23);
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}

// One Q8_K block as an ActSuperQ8_K (token `half` of pair row super-block
// i): field j's dword L is dword j of the block's sub-block L, an 8 x 8
// dword transpose done two fields at a time by two two-source permutes and
// a masked merge; the per-sub-block scale, min term and -32 offsets from
// the 16-element sums.
void prepare_super(const BlockQ8_K& y, int64_t i, int half, uint8_t* out) {
    const auto* q = reinterpret_cast<const __m512i*>(y.qs);
    const __m512i z01 = _mm512_loadu_si512(q), z23 = _mm512_loadu_si512(q + 1);
    const __m512i z45 = _mm512_loadu_si512(q + 2), z67 = _mm512_loadu_si512(q + 3);
    // Lane 8f + L (field j + f, sub-block L): dword j + f of sub-block L,
    // which sits at dword 8 * (L % 2) + j + f of its pair of sub-blocks; the
    // first permute fills sub-blocks 0-3 (and 4-7 with the same indices into
    // the second pair of vectors). Indices for j = 0; field pair j adds j.
    const __m512i pick0 = _mm512_setr_epi32(0, 8, 16, 24, 0, 8, 16, 24, 1, 9, 17, 25, 1, 9, 17, 25);
    for (int j = 0; j < 8; j += 2) {
        const __m512i pick = _mm512_add_epi32(pick0, _mm512_set1_epi32(j));
        const __m512i lo = _mm512_permutex2var_epi32(z01, pick, z23);
        const __m512i hi = _mm512_permutex2var_epi32(z45, pick, z67);
        const __m512i both = _mm512_mask_blend_epi32(0xF0F0, lo, hi);
        _mm256_storeu_si256(field<ActSuperQ8_K>(out, i, half, j),
                            _mm512_castsi512_si256(both));
        _mm256_storeu_si256(field<ActSuperQ8_K>(out, i, half, j + 1),
                            _mm512_extracti64x4_epi64(both, 1));
    }
    // bsums[2L + h]: the sums of sub-block L's halves.
    const __m512i s = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.bsums)));
    const __m512i even_odd = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15), s);
    const __m256i first = _mm512_castsi512_si256(even_odd), second = _mm512_extracti64x4_epi64(even_odd, 1);
    const __m256 d = _mm256_set1_ps(y.d);
    _mm256_storeu_ps(reinterpret_cast<float*>(field<ActSuperQ8_K>(out, i, half, 8)), d);
    _mm256_storeu_ps(reinterpret_cast<float*>(field<ActSuperQ8_K>(out, i, half, 9)),
                     _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_add_epi32(first, second))));
    const __m256i neg32 = _mm256_set1_epi32(-32);
    _mm256_storeu_si256(field<ActSuperQ8_K>(out, i, half, 10),
                        _mm256_mullo_epi32(first, neg32));
    _mm256_storeu_si256(field<ActSuperQ8_K>(out, i, half, 11),
                        _mm256_mullo_epi32(second, neg32));
}

}  // namespace

int64_t avx512_prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out) {
    static_assert(offsetof(ActSuperQ8_K, d) == 8 * kQuadField && offsetof(ActSuperQ8_K, msum) == 9 * kQuadField &&
                  offsetof(ActSuperQ8_K, neg32) == 10 * kQuadField);
    if (act == GgmlType::Q8_K) {
        const auto* y = reinterpret_cast<const BlockQ8_K*>(q_row);
        for (int64_t i = 0; i < nb; ++i) prepare_super(y[i], i, half, out);
        return nb;
    }
    return prepare_full_quads(act, nb, q_row, half, out);
}

}  // namespace tessera::x86
#pragma GCC pop_options
#pragma GCC diagnostic pop
#else
namespace tessera::x86 {
int64_t avx512_prepare_full_quads(GgmlType, int64_t, const uint8_t*, int, uint8_t*) {
    TS_CHECK_MSG(false, "x86 only");
    return 0;
}
}  // namespace tessera::x86
#endif
