// The AMX-INT8 build of the prompt tiles (kernels/amx_tiles.h). Only called
// at SimdLevel::Avx512Amx, which amx_int8_usable() (kernels/cpu/dot_x86.h)
// gates.
#pragma once

#include <cstddef>

#include "kernels/amx_tiles.h"

namespace tessera::x86 {

// A block of a 16-row tile in the weight scratch: half 0's four 64-byte tile
// rows, half 1's, then the 16 rows' block scales as floats, then (Q4_1)
// their minimums as floats.
inline constexpr size_t kAmxHalfBytes = 4 * 64;
inline constexpr size_t kAmxBlockBytes = 2 * kAmxHalfBytes + 2 * 64;

// A super-block of a 16-row Q4_K tile: sub-block L's tile (eight 64-byte
// rows: four bytes of each of the 16 rows per row), then the 16 rows'
// d * scale_L (times 1/16 for odd L) and dmin * min_L as floats, lane by lane.
inline constexpr size_t kAmxSubBlockBytes = 8 * 64;
inline constexpr size_t kAmxSuperScalesAt = 8 * kAmxSubBlockBytes;
inline constexpr size_t kAmxSuperBytes = kAmxSuperScalesAt + 2 * 8 * 64;

// Floats per block and token in a 16-token group's block floats
// (amx_tiles.h): d, then Q8_1's d * sum, or Q8_K's eight sub-block sums.
inline constexpr int kAmxQ8_0Floats = 1;
inline constexpr int kAmxQ8_1Floats = 2;
inline constexpr int kAmxQ8_KFloats = 9;

// nullptr for the formats without tiles.
AmxTilesFn amx_tiles(GgmlType weight);

}  // namespace tessera::x86
