// AVX2 + FMA + F16C dot kernels (the body is shared with the AVX-512-VNNI
// build in dot_x86_body.h). Only called when the CPU reports those features.
#include "kernels/cpu/dot_x86.h"

#if defined(__x86_64__)
// Every header comes before the target pragma, so inline functions they define
// are compiled for the baseline ISA in this file as in every other.
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {
namespace avx2_impl {
constexpr bool kVnni = false;
#include "kernels/cpu/dot_x86_body.h"
#include "kernels/cpu/dot_rows_x86_body.h"
#include "kernels/cpu/dot_f16_bf16_x86_body.h"
#include "kernels/cpu/quad_qwords_x86_body.h"
#include "kernels/cpu/dot_legacy_x86_body.h"
#include "kernels/cpu/dot_legacy_pairs_x86_body.h"
#include "kernels/cpu/dot_legacy_tiles_x86_body.h"
#include "kernels/cpu/dot_kquants_x86_body.h"
#include "kernels/cpu/dot_lowbit_x86_body.h"
#include "kernels/cpu/dot_select_x86_body.h"
}  // namespace avx2_impl

MultiDotFn avx2_multi_dot(GgmlType weight) { return avx2_impl::select_kernel(weight); }
RowsKernel avx2_rows_dot(GgmlType weight) { return avx2_impl::select_rows_kernel(weight); }

}  // namespace tessera::x86
#pragma GCC pop_options
#else
namespace tessera::x86 {
MultiDotFn avx2_multi_dot(GgmlType) { return nullptr; }
RowsKernel avx2_rows_dot(GgmlType) { return {}; }
}  // namespace tessera::x86
#endif
