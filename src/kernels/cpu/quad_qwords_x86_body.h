// Four 32-byte rows a, b, c, d (the qs of four Q8_0 blocks) in the
// ActQuad::qs order: vector j holds qword j of a, c, b and d (qword unpacks,
// then 128-bit permutes). Shared by the AVX2 activation re-layout
// (act_quads_avx2.cpp) and the Q8_0 weight quads of the tiles
// (dot_legacy_x86_body.h); included inside their namespaces.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "quad_qwords_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#define TESSERA_BODY_QUAD_QWORDS_X86 1

inline void quad_qwords(__m256i a, __m256i b, __m256i c, __m256i d, __m256i (&f)[4]) {
    const __m256i ac_even = _mm256_unpacklo_epi64(a, c), ac_odd = _mm256_unpackhi_epi64(a, c);
    const __m256i bd_even = _mm256_unpacklo_epi64(b, d), bd_odd = _mm256_unpackhi_epi64(b, d);
    f[0] = _mm256_permute2x128_si256(ac_even, bd_even, 0x20);
    f[1] = _mm256_permute2x128_si256(ac_odd, bd_odd, 0x20);
    f[2] = _mm256_permute2x128_si256(ac_even, bd_even, 0x31);
    f[3] = _mm256_permute2x128_si256(ac_odd, bd_odd, 0x31);
}
