// Entry points of the x86 row kernel tables (kernels/row_kernels.h), each
// compiled in its own translation unit under a GCC target pragma and only
// called after a CPUID check (best_simd_level).
#pragma once

#include "kernels/row_kernels.h"

namespace tessera::x86 {

// nullptr off x86.
const RowKernels* avx2_row_kernels();
const RowKernels* avx512_row_kernels();

}  // namespace tessera::x86
