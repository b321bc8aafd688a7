// Logits scans at every SIMD level against plain loops: the max ignoring NaN,
// the NaN / +inf flag and the first index of a value, with the special values
// placed in full vectors and in odd tails; and the lowest index on ties.
#include "kernels/logits_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tensor_test_util.h"

namespace tessera {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Expected {
    float max = -kInf;
    bool bad = false;
};

Expected reference(const std::vector<float>& x) {
    Expected e;
    for (float v : x) {
        if (std::isnan(v) || v == kInf) e.bad = true;
        if (!std::isnan(v)) e.max = std::max(e.max, v);
    }
    return e;
}

int64_t reference_first(const std::vector<float>& x, float value) {
    for (size_t i = 0; i < x.size(); ++i) {
        if (x[i] == value) return static_cast<int64_t>(i);
    }
    return -1;
}

void check_row(const std::vector<float>& x, const char* what) {
    const Expected e = reference(x);
    for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
        const auto level = static_cast<SimdLevel>(lv);
        const LogitsStats s = logits_stats(x, level);
        ASSERT_EQ(s.max, e.max) << what << " n=" << x.size() << " " << simd_level_name(level);
        ASSERT_EQ(s.nan_or_pos_inf, e.bad) << what << " n=" << x.size() << " " << simd_level_name(level);
        for (float value : {e.max, x.empty() ? 0.0f : x.back(), 12345.0f}) {
            ASSERT_EQ(first_index_of(x, value, level), reference_first(x, value))
                << what << " n=" << x.size() << " value " << value << " " << simd_level_name(level);
        }
    }
}

TEST(LogitsScanTest, MatchesPlainLoopsAtEveryLevel) {
    std::mt19937 rng(29);
    for (int64_t n : {0, 1, 5, 8, 15, 16, 17, 31, 32, 33, 47, 100, 49152, 49157}) {
        const auto base = test::random_floats(rng, n, 3.0f);
        check_row(base, "random");
        if (n == 0) continue;
        // One special value at each of several places: first, inside a full
        // vector, in the tail, last.
        for (int64_t at : {int64_t{0}, n / 2, std::max<int64_t>(0, n - 3), n - 1}) {
            for (float special : {kNaN, -kNaN, kInf, -kInf, 1e30f, -0.0f}) {
                auto x = base;
                x[static_cast<size_t>(at)] = special;
                check_row(x, "special");
            }
        }
        // Ties for the max: the lowest index must win.
        auto tie = base;
        const float top = reference(base).max;
        tie[static_cast<size_t>(n - 1)] = top;
        check_row(tie, "tie");
        std::vector<float> all_neg_inf(static_cast<size_t>(n), -kInf);
        check_row(all_neg_inf, "all -inf");
        std::vector<float> all_nan(static_cast<size_t>(n), kNaN);
        check_row(all_nan, "all NaN");
        std::vector<float> zeros(static_cast<size_t>(n), -0.0f);
        zeros[static_cast<size_t>(n - 1)] = 0.0f;  // +0 == -0: the first one wins
        check_row(zeros, "signed zeros");
    }
}

TEST(LogitsScanTest, ArgmaxIsTheLowestIndexOfTheMax) {
    std::vector<float> x(1000, -1.0f);
    x[700] = 2.0f;
    x[300] = 2.0f;
    x[999] = 2.0f;
    for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
        const auto level = static_cast<SimdLevel>(lv);
        const LogitsStats s = logits_stats(x, level);
        EXPECT_EQ(s.max, 2.0f);
        EXPECT_FALSE(s.nan_or_pos_inf);
        EXPECT_EQ(first_index_of(x, s.max, level), 300);
    }
}

}  // namespace
}  // namespace tessera
