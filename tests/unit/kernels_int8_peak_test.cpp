// The int8 peak probe: a figure at every SIMD level, none at the scalar one,
// and on one thread no more than the probe's own loop can issue at a few GHz.
#include "kernels/int8_peak.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(Int8PeakTest, MeasuresEverySimdLevelAndNotTheScalarOne) {
    ThreadPool pool(1);
    EXPECT_EQ(measure_int8_peak(pool, SimdLevel::Scalar, 1), 0.0);
    for (int l = 1; l <= static_cast<int>(best_simd_level()); ++l) {
        const double peak = measure_int8_peak(pool, static_cast<SimdLevel>(l), 2);
        // Over 1 G multiply-adds per second with any SIMD; under 64 per
        // cycle (a 512-bit vpdpbusd) twice per cycle at 10 GHz on one core.
        EXPECT_GT(peak, 1e9) << l;
        EXPECT_LT(peak, 64.0 * 2 * 10e9) << l;
    }
}

}  // namespace
}  // namespace tessera
