// Tests for tensor/fp16.h: every half value, round-to-nearest-even at every
// midpoint, the edge cases (subnormals, overflow, NaN), and agreement with the
// CPU's F16C instructions on random floats when the CPU has them.
#include "tensor/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera {
namespace {

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t hw_to_half(float f) {
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float hw_from_half(uint16_t h) { return _cvtsh_ss(h); }
bool have_f16c() { return __builtin_cpu_supports("f16c"); }
#else
bool have_f16c() { return false; }
uint16_t hw_to_half(float) { return 0; }
float hw_from_half(uint16_t) { return 0; }
#endif

TEST(Fp16Test, KnownValues) {
    EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
    EXPECT_EQ(fp16_to_fp32(0xc000), -2.0f);
    EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
    EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    EXPECT_EQ(fp16_to_fp32(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
    EXPECT_EQ(fp16_to_fp32(0x7c00), std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7e00)));
    EXPECT_EQ(f32_to_bits(fp16_to_fp32(0x8000)), 0x80000000u);

    EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);  // the tie rounds to even: infinity
    EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-1e10f), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);        // half of the smallest: even -> 0
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);        // 1.5 ulp ties to even 2
    EXPECT_EQ(fp32_to_fp16(1e-40f), 0x0000);
    EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(fp32_to_fp16(std::nanf("")) & 0x7e00, 0x7e00);
}

TEST(Fp16Test, EveryHalfRoundTrips) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        if (nan) {
            ASSERT_TRUE(std::isnan(f)) << h;
            // Quiet NaNs keep their payload; signalling ones are quietened.
            ASSERT_EQ(fp32_to_fp16(f), h | 0x200) << h;
        } else {
            ASSERT_EQ(fp32_to_fp16(f), h) << h;
        }
        if (have_f16c()) {
            ASSERT_EQ(f32_to_bits(f), f32_to_bits(hw_from_half(static_cast<uint16_t>(h)))) << h;
        }
    }
}

TEST(Fp16Test, MidpointsRoundToEven) {
    // Between two adjacent finite positive halves, the exact midpoint goes to
    // the even one and anything past it to the nearer one.
    for (uint16_t h = 0; h < 0x7bff; ++h) {
        const double lo = fp16_to_fp32(h), hi = fp16_to_fp32(static_cast<uint16_t>(h + 1));
        const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
        const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : h;
        ASSERT_EQ(fp32_to_fp16(mid), even) << h;
        ASSERT_EQ(fp32_to_fp16(std::nextafter(mid, 0.0f)), h) << h;
        ASSERT_EQ(fp32_to_fp16(std::nextafter(mid, 1e9f)), h + 1) << h;
        ASSERT_EQ(fp32_to_fp16(-mid), even | 0x8000) << h;
    }
}

TEST(Fp16Test, MatchesF16cOnRandomFloats) {
    if (!have_f16c()) GTEST_SKIP() << "CPU has no F16C";
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> bits;
    for (int i = 0; i < 1000000; ++i) {
        const uint32_t b = bits(rng);
        const float f = bits_to_f32(b);
        if (std::isnan(f)) continue;
        ASSERT_EQ(fp32_to_fp16(f), hw_to_half(f)) << std::hex << b;
    }
}

TEST(Bf16Test, ConvertsAndRoundsToEven) {
    EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
    EXPECT_EQ(bf16_to_fp32(0xc040), -3.0f);
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(fp32_to_bf16(bits_to_f32(0x3f808000u)), 0x3f80);  // tie -> even
    EXPECT_EQ(fp32_to_bf16(bits_to_f32(0x3f818000u)), 0x3f82);  // tie -> even (up)
    EXPECT_EQ(fp32_to_bf16(bits_to_f32(0x3f808001u)), 0x3f81);
    EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_EQ(fp32_to_bf16(bits_to_f32(0x7f800001u)), 0x7fc0);  // NaN stays NaN, quiet
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = bf16_to_fp32(static_cast<uint16_t>(h));
        if (!std::isnan(f)) {
            ASSERT_EQ(fp32_to_bf16(f), h);
        }
    }
}

}  // namespace
}  // namespace tessera
