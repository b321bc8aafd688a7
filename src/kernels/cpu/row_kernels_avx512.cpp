// AVX-512 row kernels: the shared body over 16-float vectors. Only called
// when the CPU reports avx512f (the VNNI dispatch level).
#include "kernels/cpu/row_kernels_x86.h"

#if defined(__x86_64__)
// GCC 12's 512-bit intrinsics (reductions, masked builtins) start from a
// self-initialised "undefined" vector that -W(maybe-)uninitialized reports
// once inlined (GCC bug 105593); the pragma must cover the header's lines.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// Every header comes before the target pragma, so inline functions they define
// are compiled for the baseline ISA in this file as in every other.
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f")

namespace tessera::x86 {
namespace rows_avx512_impl {

#include "kernels/cpu/vec_exp_body.h"
#include "kernels/cpu/simd_ops_avx512_body.h"
#include "kernels/cpu/row_kernels_x86_body.h"

// Two 8-double accumulators: lane j of 16 gets elements j (mod 16), as in
// the AVX2 kernel. A float square is exact in double, so the FMA rounds only
// the sum.
double sum_squares(const float* x, int64_t n) {
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(x + k)), b = _mm512_cvtps_pd(_mm256_loadu_ps(x + k + 8));
        lo = _mm512_fmadd_pd(a, a, lo);
        hi = _mm512_fmadd_pd(b, b, hi);
    }
    double lanes[16];
    _mm512_storeu_pd(lanes, lo);
    _mm512_storeu_pd(lanes + 8, hi);
    return finish_sum_squares(lanes, x + k, n - k);
}

constexpr RowKernels kKernels{swiglu,
                              sum_squares,
                              to_half<Ops::store_f16, fp32_to_fp16>,
                              to_half<Ops::store_bf16, fp32_to_bf16>,
                              from_f16,
                              from_bf16,
                              logits_stats,
                              first_equal};

}  // namespace rows_avx512_impl

const RowKernels* avx512_row_kernels() { return &rows_avx512_impl::kKernels; }

}  // namespace tessera::x86
#pragma GCC diagnostic pop
#pragma GCC pop_options
#else
namespace tessera::x86 {
const RowKernels* avx512_row_kernels() { return nullptr; }
}  // namespace tessera::x86
#endif
