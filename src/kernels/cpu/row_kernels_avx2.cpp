// AVX2 + FMA + F16C row kernels: the shared body over 8-float vectors. Only
// called when the CPU reports avx2, fma and f16c (the AVX2 level).
#include "kernels/cpu/row_kernels_x86.h"

#if defined(__x86_64__)
// Every header comes before the target pragma, so inline functions they define
// are compiled for the baseline ISA in this file as in every other.
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera::x86 {
namespace rows_avx2_impl {

#include "kernels/cpu/vec_exp_body.h"
#include "kernels/cpu/simd_ops_avx2_body.h"
#include "kernels/cpu/row_kernels_x86_body.h"

// Four 4-double accumulators: lane j of 16 gets elements j (mod 16). A float
// square is exact in double, so the FMA rounds only the sum, as in scalar.
double sum_squares(const float* x, int64_t n) {
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        for (int j = 0; j < 4; ++j) {
            const __m256d d = _mm256_cvtps_pd(_mm_loadu_ps(x + k + 4 * j));
            acc[j] = _mm256_fmadd_pd(d, d, acc[j]);
        }
    }
    double lanes[16];
    for (int j = 0; j < 4; ++j) _mm256_storeu_pd(lanes + 4 * j, acc[j]);
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

}  // namespace rows_avx2_impl

const RowKernels* avx2_row_kernels() { return &rows_avx2_impl::kKernels; }

}  // namespace tessera::x86
#pragma GCC pop_options
#else
namespace tessera::x86 {
const RowKernels* avx2_row_kernels() { return nullptr; }
}  // namespace tessera::x86
#endif
