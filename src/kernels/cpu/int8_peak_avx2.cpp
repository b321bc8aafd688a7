// 256-bit maddubs + madd chains for the int8 peak probe: the AVX2 tiles'
// byte dot (u8 x s8 pairs to int16, pairs to int32, then an add).
#include "kernels/cpu/int8_peak_x86.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {

uint32_t int8_peak_avx2(int64_t iters) {
    constexpr int kChains = 8;
    __m256i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_epi32(i);
    __m256i w = _mm256_set1_epi8(3), x = _mm256_set1_epi8(-5), ones = _mm256_set1_epi16(1);
    asm volatile("" : "+v"(w), "+v"(x), "+v"(ones));
    for (int64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 8
        for (int i = 0; i < kChains; ++i) {
            acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), ones));
            asm volatile("" : "+v"(w));  // keeps the product inside the loop
        }
    }
    __m256i s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm256_add_epi32(s, acc[i]);
    alignas(32) uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    uint32_t total = 0;
    for (uint32_t v : lanes) total += v;
    return total;
}

}  // namespace tessera::x86
#pragma GCC pop_options
#else
namespace tessera::x86 {
uint32_t int8_peak_avx2(int64_t) { return 0; }
}  // namespace tessera::x86
#endif
