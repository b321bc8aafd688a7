// The x86 loops of the int8 peak probe (kernels/int8_peak.h), one per level,
// each in a translation unit compiled for its instruction set.
#pragma once

#include <cstdint>

namespace tessera::x86 {

// Runs `iters` rounds of independent multiply-add chains and returns a sum
// of the accumulators (so the work cannot be elided); each round does the
// returned count of int8 multiply-adds, given by the *_macs_per_round
// constants.
inline constexpr int64_t kAvx512MacsPerRound = 12 * 64;  // 12 chains of one 512-bit vpdpbusd
inline constexpr int64_t kAvx2MacsPerRound = 8 * 32;     // 8 chains of one 256-bit maddubs + madd + add
uint32_t int8_peak_avx512(int64_t iters);
uint32_t int8_peak_avx2(int64_t iters);

}  // namespace tessera::x86
