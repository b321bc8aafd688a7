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

// nullptr for the formats without tiles.
AmxTilesFn amx_tiles(GgmlType weight);

}  // namespace tessera::x86
