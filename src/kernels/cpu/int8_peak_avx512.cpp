// 512-bit vpdpbusd chains for the int8 peak probe. Twelve chains cover the
// instruction's latency at two issues per cycle (8 chains: 6.9-7.4 G/s, 12:
// 8.0 on one core). GCC 12 kept sixteen in registers only by copying them
// around and one of them through a stack slot each round, which halved the
// rate (4.3 G/s), so the round stays at twelve and the asm barrier on the
// operands keeps it from being hoisted.
#include "kernels/cpu/int8_peak_x86.h"

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")

namespace tessera::x86 {

uint32_t int8_peak_avx512(int64_t iters) {
    constexpr int kChains = 12;
    __m512i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
    __m512i w = _mm512_set1_epi8(3), x = _mm512_set1_epi8(-5);
    for (int64_t n = 0; n < iters; ++n) {
        asm volatile("" : "+v"(w), "+v"(x));  // unknown to the compiler each round: no folding
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], w, x);
    }
    __m512i s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
    // Summed as unsigned: the chains wrap, and _mm512_reduce_add_epi32 adds
    // signed ints (an overflow UBSan reports).
    alignas(64) uint32_t lanes[16];
    _mm512_store_si512(lanes, s);
    uint32_t total = 0;
    for (uint32_t v : lanes) total += v;
    return total;
}

}  // namespace tessera::x86
#pragma GCC pop_options
#pragma GCC diagnostic pop
#else
namespace tessera::x86 {
uint32_t int8_peak_avx512(int64_t) { return 0; }
}  // namespace tessera::x86
#endif
