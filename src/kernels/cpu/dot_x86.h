// Entry points of the x86 SIMD dot kernels. Each level lives in its own
// translation unit compiled for that instruction set (GCC target pragma), and
// is only called after a CPUID check, so the binary runs on any x86-64.
#pragma once

#include "kernels/dot_kernels.h"

namespace tessera::x86 {

// nullptr (an empty RowsKernel) when that level has no kernel for the type.
MultiDotFn avx2_multi_dot(GgmlType weight);
MultiDotFn avx512vnni_multi_dot(GgmlType weight);
RowsKernel avx2_rows_dot(GgmlType weight);
RowsKernel avx512vnni_rows_dot(GgmlType weight);

// Whether one-token tiles prefetch long weight rows non-temporally (on AMD
// CPUs; dot_rows_x86_body.h says why). Worked out once.
bool nta_weight_streams();

// Whether the VNNI one-token tiles read Q8_0 rows, and every other format's
// long rows (K-quants too), one after another, each one stream the hardware
// prefetcher follows (long rows with an L2 prefetch ahead as well): on AMD
// family 19h, which in the AVX-512 build is Zen 4 (dot_legacy_tiles_x86_body.h
// says why). Worked out once.
bool sequential_decode_rows();

// Whether the CPU has AMX-TILE and AMX-INT8, the OS saves their state, and
// this process got leave to use the tile data (asked for here, once per call).
bool amx_int8_usable();

}  // namespace tessera::x86
