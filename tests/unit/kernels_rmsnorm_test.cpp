// RMSNorm at the SIMD levels against the scalar reference (the double sum of
// squares is added in another order, so a last-bit difference is allowed),
// bit-equal between AVX2 and AVX-512, and row by row.
#include "kernels/rmsnorm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tensor_test_util.h"

namespace tessera {
namespace {

std::vector<float> norm(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t n,
                        SimdLevel level) {
    std::vector<float> y(x.size());
    rmsnorm(x.data(), w.data(), y.data(), rows, n, 1e-5f, level);
    return y;
}

TEST(RmsnormTest, SimdMatchesScalarReference) {
    std::mt19937 rng(31);
    for (int64_t n : {1, 3, 15, 16, 17, 33, 576, 1003}) {
        const int64_t rows = 3;
        auto x = test::random_floats(rng, rows * n, 2.0f);
        x[0] = 300.0f;  // one large value per first row
        const auto w = test::random_floats(rng, n);
        const auto ref = norm(x, w, rows, n, SimdLevel::Scalar);
        for (int lv = 1; lv <= static_cast<int>(best_simd_level()); ++lv) {
            const auto got = norm(x, w, rows, n, static_cast<SimdLevel>(lv));
            for (size_t i = 0; i < ref.size(); ++i) {
                ASSERT_NEAR(got[i], ref[i], 5e-7 * std::fabs(ref[i])) << "n=" << n << " i=" << i;
            }
        }
    }
}

TEST(RmsnormTest, LevelsAgreeBitForBitAndRowsAreIndependent) {
    if (best_simd_level() == SimdLevel::Scalar) GTEST_SKIP() << "CPU has no AVX2";
    std::mt19937 rng(37);
    const int64_t n = 577, rows = 4;
    const auto x = test::random_floats(rng, rows * n, 3.0f);
    const auto w = test::random_floats(rng, n);
    const auto best = norm(x, w, rows, n, best_simd_level());
    EXPECT_EQ(best, norm(x, w, rows, n, SimdLevel::Avx2));
    for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> row(x.begin() + r * n, x.begin() + (r + 1) * n);
        const auto one = norm(row, w, 1, n, best_simd_level());
        EXPECT_TRUE(std::equal(one.begin(), one.end(), best.begin() + r * n)) << r;
    }
    std::vector<float> in_place = x;
    rmsnorm(in_place.data(), w.data(), in_place.data(), rows, n, 1e-5f, best_simd_level());
    EXPECT_EQ(in_place, best);
}

}  // namespace
}  // namespace tessera
