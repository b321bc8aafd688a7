// The AVX2 activation quantizer must write exactly the bytes of the scalar
// reference quantize_row (Q8_0, Q8_1 and Q8_K), including all-zero blocks,
// ties at .5, outliers and (Q8_K) a largest magnitude held by two elements
// of opposite sign.
#include "kernels/cpu/act_quantize_x86.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/dot_kernels.h"
#include "tensor/quant.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

TEST(ActQuantizeTest, Avx2BytesEqualScalarReference) {
    if (best_simd_level() == SimdLevel::Scalar) GTEST_SKIP() << "CPU has no AVX2";
    std::mt19937 rng(41);
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
        const int64_t bs = block_elems(t);
        for (int64_t n : {bs, 3 * bs, 18 * bs}) {
            for (int round = 0; round < 20; ++round) {
                auto x = test::random_floats(rng, n, round % 2 ? 3.0f : 0.01f);
                for (int j = 0; j < bs; ++j) x[j] = 0.0f;  // an all-zero block
                if (n > bs) {
                    // Block scale 1: every integer tie below rounds to even.
                    x[bs + 8] = 127.0f;
                    for (int j = bs + 9; j < bs + 32; ++j) x[j] = static_cast<float>(j - bs - 20) + 0.5f;
                }
                if (n > 2 * bs && round % 2 == 0) {  // the first of two maxima decides the sign
                    // Apart, then within one group of eight (the SIMD scan's step).
                    const int first = round % 4 == 2 ? 5 : 17, second = round % 4 == 2 ? 9 : 20;
                    x[2 * bs + first] = round % 8 < 4 ? 50.0f : -50.0f;
                    x[2 * bs + second] = -x[2 * bs + first];
                }
                if (round == 3) x[n - 1] = 1e30f;  // an outlier
                const size_t bytes = *ggml_row_bytes(t, n);
                std::vector<uint8_t> ref(bytes), simd(bytes);
                quantize_row(t, x.data(), ref.data(), n);
                x86::avx2_quantize_act(t, x.data(), simd.data(), n);
                ASSERT_EQ(ref, simd) << ggml_type_name(t) << " n=" << n << " round=" << round;
            }
        }
    }
}

}  // namespace
}  // namespace tessera
