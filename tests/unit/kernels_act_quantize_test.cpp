// The AVX2 activation quantizer must write exactly the bytes of the scalar
// reference quantize_row (Q8_0 and Q8_1), including all-zero blocks, ties
// at .5 and outliers.
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
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_1}) {
        for (int64_t n : {32, 96, 576}) {
            for (int round = 0; round < 20; ++round) {
                auto x = test::random_floats(rng, n, round % 2 ? 3.0f : 0.01f);
                for (int j = 0; j < 32; ++j) x[j] = 0.0f;  // an all-zero block
                if (n > 32) {
                    x[40] = 127.0f;  // block scale 1: every integer tie below rounds to even
                    for (int j = 41; j < 64; ++j) x[j] = static_cast<float>(j - 52) + 0.5f;
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
