// Entry points of the x86 SIMD attention range kernels (AVX2 and AVX-512),
// each compiled in its own translation unit under a GCC target pragma and
// only called after a CPUID check.
#pragma once

#include "kernels/attention.h"

namespace tessera::x86 {

// nullptr when the level has no kernel for this head_dim (it must be a
// multiple of the vector width: 8 floats for AVX2, 16 for AVX-512) or these
// K/V storage types (F32, F16, BF16, Q8_0; F16 and Q8_0 scales need F16C).
AttendRangeFn avx2_attend_range(int head_dim, GgmlType k_type, GgmlType v_type);
AttendRangeFn avx512_attend_range(int head_dim, GgmlType k_type, GgmlType v_type);

}  // namespace tessera::x86
