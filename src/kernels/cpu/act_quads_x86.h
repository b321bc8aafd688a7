// The AVX-512 and AVX2 builds of the ActQuad / ActQuadQ8_1 / ActSuperQ8_K
// pair-row preparation (kernels/act_quads.h): the same bytes as the plain
// C++ one, whole quads at a time. Only called after a CPUID check for their
// level.
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"

namespace tessera::x86 {

// Writes the first nb / 4 quads of token `half` of the pair row `out` from
// a row of nb Q8_0 (act Q8_0) or Q8_1 (act Q8_1) blocks, or all nb
// super-blocks of a Q8_K row; returns how many it wrote. The caller does
// the rest of the row.
int64_t avx512_prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out);
// The same for Q8_0 and Q8_1 rows only (Q8_K rows keep the plain loop).
int64_t avx2_prepare_full_quads(GgmlType act, int64_t nb, const uint8_t* q_row, int half, uint8_t* out);

}  // namespace tessera::x86
