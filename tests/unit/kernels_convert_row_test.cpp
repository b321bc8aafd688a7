// Row converters at every SIMD level must write exactly the bytes of the
// scalar reference: fp32_to_fp16 / fp32_to_bf16 for random bit patterns and
// every edge (NaN payloads, infinities, subnormals, overflow to infinity,
// ties to even), at odd lengths and offsets; quantize_row for Q8_0/Q8_1/Q8_K.
#include "kernels/convert_row.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tensor/fp16.h"
#include "tensor/quant.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

std::vector<float> edge_and_random_floats() {
    std::vector<uint32_t> bits = {
        0x00000000, 0x80000000, 0x7f800000, 0xff800000,  // zeros, infinities
        0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001,  // quiet and signalling NaNs
        0x7fbfffff, 0x7fffffff, 0xffffffff, 0x7f802000,  // NaN payloads (low bits dropped)
        0x00000001, 0x807fffff, 0x00800000, 0x80800000,  // float subnormals, smallest normals
        0x7f7fffff, 0xff7fffff, 0x477fe000, 0x477ff000,  // FLT_MAX, 65504, 65520 (ties to inf)
        0x477fefff, 0x33000000, 0x33000001, 0x33c00000,  // just below, half the smallest subnormal
        0x387fc000, 0x38800000, 0x3f800000, 0x3f801000,  // largest subnormal half, 1, 1 + half ulp
        0x3f803000, 0x3f808000, 0x3f818000, 0x3f817fff,  // ties to odd/even (f16, bf16)
        0x7f7f8000, 0x7f7fffff, 0xff7f8000,              // bf16 ties that round up to infinity
    };
    // Every midpoint between adjacent halves (ties), in both signs.
    for (uint32_t h = 0; h < 0x7bff; h += 7) {
        const float mid = (fp16_to_fp32(static_cast<uint16_t>(h)) + fp16_to_fp32(static_cast<uint16_t>(h + 1))) / 2;
        bits.push_back(f32_to_bits(mid));
        bits.push_back(f32_to_bits(-mid));
    }
    std::mt19937 rng(17);
    std::uniform_int_distribution<uint32_t> any;
    for (int i = 0; i < 200000; ++i) bits.push_back(any(rng));
    // Random floats in the half range, where rounding does real work.
    std::uniform_int_distribution<uint32_t> half_range(0x33000000, 0x47800000);
    for (int i = 0; i < 50000; ++i) bits.push_back(half_range(rng) | (i % 2 ? 0x80000000u : 0u));
    std::vector<float> out;
    for (uint32_t b : bits) out.push_back(bits_to_f32(b));
    return out;
}

TEST(ConvertRowTest, HalfFormatsMatchScalarBitForBit) {
    const auto x = edge_and_random_floats();
    const auto n = static_cast<int64_t>(x.size());
    for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
        const auto level = static_cast<SimdLevel>(lv);
        for (GgmlType t : {GgmlType::F16, GgmlType::BF16}) {
            const ConvertRowFn convert = find_convert_row(t, level);
            std::vector<uint16_t> got(x.size());
            convert(x.data(), got.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t want = t == GgmlType::F16 ? fp32_to_fp16(x[i]) : fp32_to_bf16(x[i]);
                ASSERT_EQ(got[i], want) << ggml_type_name(t) << " " << simd_level_name(level) << " bits 0x"
                                        << std::hex << f32_to_bits(x[i]);
            }
            // Odd lengths at odd offsets: tails of every size, nothing
            // written past the end.
            for (int64_t len = 0; len <= 40; ++len) {
                std::vector<uint16_t> part(static_cast<size_t>(len) + 1, 0xabcd);
                convert(x.data() + 3 + len, part.data(), len);
                for (int64_t i = 0; i < len; ++i) ASSERT_EQ(part[i], got[3 + len + i]) << len << " " << i;
                ASSERT_EQ(part[len], 0xabcd) << "wrote past the row, len " << len;
            }
        }
    }
}

TEST(ConvertRowTest, MatchesQuantizeRowForEveryTarget) {
    std::mt19937 rng(23);
    for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
        const auto level = static_cast<SimdLevel>(lv);
        for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q8_1,
                           GgmlType::Q8_K}) {
            for (int64_t n : {256, 768, 1536}) {  // Q8_K blocks are 256 long
                auto x = test::random_floats(rng, n, 2.0f);
                x[5] = 1e30f;  // an outlier block
                const size_t bytes = *ggml_row_bytes(t, n);
                std::vector<uint8_t> want(bytes), got(bytes);
                quantize_row(t, x.data(), want.data(), n);
                find_convert_row(t, level)(x.data(), got.data(), n);
                ASSERT_EQ(want, got) << ggml_type_name(t) << " " << simd_level_name(level) << " n=" << n;
            }
        }
    }
}

// Q8_0 / Q8_1 / Q8_K rows with special blocks: all zero (inverse scale 0),
// -0 only, a NaN (skipped by the max, quantized to -128), an infinity (its
// block's other values times a zero inverse), subnormals only (an inverse
// scale that overflows), a huge value and a tiny block. Every level must
// write the reference's bytes (the SIMD levels once wrote -128 where the
// reference's cast of NaN, undefined behaviour, gave 0).
TEST(ConvertRowTest, Q8BlocksWithSpecialValuesMatchQuantizeRow) {
    std::mt19937 rng(29);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
        const auto level = static_cast<SimdLevel>(lv);
        for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
            for (int64_t blocks : {1, 8, 15, 16, 17, 33, 40}) {
                if (t == GgmlType::Q8_K && blocks % 8 != 0) continue;  // 256-element blocks
                const int64_t n = blocks * 32;
                auto x = test::random_floats(rng, n, 3.0f);
                auto fill = [&](int64_t b, float v) { std::fill(x.begin() + 32 * b, x.begin() + 32 * (b + 1), v); };
                fill(0, 0.0f);
                if (blocks > 1) fill(1, -0.0f);
                if (blocks > 2) x[2 * 32 + 7] = nan;
                if (blocks > 3) x[3 * 32 + 1] = -inf;
                if (blocks > 4) fill(4, 1e-40f);
                if (blocks > 5) x[5 * 32 + 31] = 3e38f;
                if (blocks > 6) fill(6, 1e-30f);
                const size_t bytes = *ggml_row_bytes(t, n);
                std::vector<uint8_t> want(bytes), got(bytes, 0xAB);
                quantize_row(t, x.data(), want.data(), n);
                find_convert_row(t, level)(x.data(), got.data(), n);
                const auto diff = std::mismatch(want.begin(), want.end(), got.begin());
                EXPECT_TRUE(diff.first == want.end())
                    << ggml_type_name(t) << " " << simd_level_name(level) << " blocks " << blocks << ": byte "
                    << (diff.first - want.begin()) << " is " << int{*diff.second} << ", want " << int{*diff.first};
            }
        }
    }
}

}  // namespace
}  // namespace tessera
