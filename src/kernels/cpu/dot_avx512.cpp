// AVX-512-VNNI dot kernels: the AVX2 kernel bodies with vpdpbusd replacing the
// maddubs+madd pair, and multi-token tiles on 512-bit vectors. Only called
// when the CPU reports avx512f/bw/vl/vnni.
#include "kernels/cpu/dot_x86.h"

#if defined(__x86_64__)
// GCC 12's 512-bit intrinsics (broadcast, insert, extract, convert) start
// from a self-initialised "undefined" vector that -Wmaybe-uninitialized
// reports once inlined; the pragma must cover the header's lines.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// Every header comes before the target pragma, so inline functions they define
// are compiled for the baseline ISA in this file as in every other.
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")

namespace tessera::x86 {
namespace avx512_impl {
constexpr bool kVnni = true;
#include "kernels/cpu/dot_x86_body.h"
#include "kernels/cpu/dot_rows_x86_body.h"
#include "kernels/cpu/dot_f16_bf16_x86_body.h"
#include "kernels/cpu/quad_qwords_x86_body.h"
#include "kernels/cpu/dot_legacy_x86_body.h"
#include "kernels/cpu/dot_legacy_pairs_x86_body.h"
#include "kernels/cpu/dot_legacy_tiles_x86_body.h"
#include "kernels/cpu/dot_nibble_decode_x86_body.h"
#include "kernels/cpu/dot_kquants_x86_body.h"
#include "kernels/cpu/dot_lowbit_x86_body.h"
#include "kernels/cpu/dot_select_x86_body.h"
}  // namespace avx512_impl

MultiDotFn avx512vnni_multi_dot(GgmlType weight) { return avx512_impl::select_kernel(weight); }
RowsKernel avx512vnni_rows_dot(GgmlType weight) { return avx512_impl::select_rows_kernel(weight); }

}  // namespace tessera::x86
#pragma GCC pop_options
#pragma GCC diagnostic pop
#else
namespace tessera::x86 {
MultiDotFn avx512vnni_multi_dot(GgmlType) { return nullptr; }
RowsKernel avx512vnni_rows_dot(GgmlType) { return {}; }
}  // namespace tessera::x86
#endif
