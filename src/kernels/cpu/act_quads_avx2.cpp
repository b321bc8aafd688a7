// AVX2 build of avx2_prepare_full_quads (the AVX-512 one is in
// act_quads_avx512.cpp, the rest shared in act_quads_x86_body.h; the same
// bytes as act_quads.cpp's plain loop). Per quad of blocks (a, b, c, d):
// qword unpacks and 128-bit permutes give the four qs fields (qword j of
// a, c, b, d), byte dots with ones and one widening each lane's sum of its
// 16 elements (the neg8 / neg128 offsets), and one fp16 convert the scales
// in lane order (a a c c b b d d). The plain loop was 1.8% of a 135M Q4_0
// pp512 on an AVX2-only Zen 3 (perf, two threads), this build 0.3%.
#include "kernels/cpu/act_quads_x86.h"

#include "core/check.h"
#include "kernels/act_quads.h"
#include "tensor/quant_blocks.h"

#if defined(__x86_64__)
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {
namespace {

#include "kernels/cpu/act_quads_x86_body.h"
#include "kernels/cpu/quad_qwords_x86_body.h"

// qs field j = qword j of a, c, b, d (quad_qwords); byte pairs times 1
// (|sum| <= 256), four fields added in int16, then the pairs of each lane.
template <class Block, class Quad>
__m256i put_qs(const Block* x, uint8_t* out, int64_t q, int half) {
    __m256i f[4];
    quad_qwords(load256(x[0].qs), load256(x[1].qs), load256(x[2].qs), load256(x[3].qs), f);
    const __m256i ones8 = _mm256_set1_epi8(1);
    __m256i s16 = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
        _mm256_storeu_si256(field<Quad>(out, q, half, j), f[j]);
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(ones8, f[j]));
    }
    return _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
}

}  // namespace

int64_t avx2_prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out) {
    return prepare_full_quads(act, nb, q_row, half, out);
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
