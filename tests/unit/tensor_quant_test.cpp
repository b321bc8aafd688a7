// Tests for tensor/quant.h against golden data from gguf-py (made by
// tools/gen_quant_golden.py): bit-exact dequantization of every format,
// byte-exact weight quantizers, and the scalar dot products against a
// double-precision dequantize-and-dot.
#include "tensor/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tensor/quant_blocks.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

struct Golden {
    GgmlType type;
    uint32_t n = 0;
    std::vector<float> source;  // empty when the file has none
    std::vector<uint8_t> quant;
    std::vector<float> dequant;
};

Golden load_golden(const std::string& name) {
    const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/golden/quant/" + name + ".bin";
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << path;
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Golden g{};
    if (bytes.size() < 16 || std::memcmp(bytes.data(), "TQG1", 4) != 0) {
        ADD_FAILURE() << "bad golden file " << path;
        return g;
    }
    uint32_t header[3];
    std::memcpy(header, bytes.data() + 4, sizeof header);
    g.type = static_cast<GgmlType>(header[0]);
    g.n = header[1];
    const size_t qbytes = *ggml_row_bytes(g.type, g.n);
    const size_t fbytes = g.n * sizeof(float);
    const size_t expect = 16 + ((header[2] & 1) ? fbytes : 0) + qbytes + fbytes;
    if (bytes.size() != expect) {
        ADD_FAILURE() << path << ": size " << bytes.size() << " != " << expect;
        return g;
    }
    size_t off = 16;
    if (header[2] & 1) {
        g.source.resize(g.n);
        std::memcpy(g.source.data(), bytes.data() + off, fbytes);
        off += fbytes;
    }
    g.quant.assign(bytes.begin() + static_cast<std::ptrdiff_t>(off), bytes.begin() + static_cast<std::ptrdiff_t>(off + qbytes));
    g.dequant.resize(g.n);
    std::memcpy(g.dequant.data(), bytes.data() + off + qbytes, fbytes);
    return g;
}

class GoldenTest : public ::testing::TestWithParam<const char*> {};
class GoldenQuantizerTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, DequantizeIsBitExact) {
    const Golden g = load_golden(GetParam());
    ASSERT_GT(g.n, 0u);
    ASSERT_TRUE(is_supported_weight_type(g.type));
    std::vector<float> out(g.n);
    dequantize_row(g.type, g.quant.data(), out.data(), g.n);
    for (uint32_t i = 0; i < g.n; ++i) {
        ASSERT_EQ(f32_to_bits(out[i]), f32_to_bits(g.dequant[i])) << GetParam() << " element " << i;
    }
}

TEST_P(GoldenQuantizerTest, WeightQuantizerIsByteExact) {
    const Golden g = load_golden(GetParam());
    ASSERT_FALSE(g.source.empty()) << GetParam();
    std::vector<uint8_t> out(g.quant.size());
    quantize_row_weights(g.type, g.source.data(), out.data(), g.n);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], g.quant[i]) << GetParam() << " byte " << i;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GoldenTest,
                         ::testing::Values("F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K",
                                           "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4"));
// gguf-py quantizes only these (no K-quant or IQ4 quantizers).
INSTANTIATE_TEST_SUITE_P(QuantizableFormats, GoldenQuantizerTest,
                         ::testing::Values("F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "MXFP4"));

// MXFP4's scale at the ends of the E8M0 range, where 2^(e - 128) is
// subnormal (e 0, 1) or the largest power of two.
TEST(CodebookTest, E8M0HalfScales) {
    EXPECT_EQ(e8m0_half(0), std::ldexp(1.0f, -128));
    EXPECT_EQ(e8m0_half(1), std::ldexp(1.0f, -127));
    EXPECT_EQ(e8m0_half(2), std::ldexp(1.0f, -126));
    EXPECT_EQ(e8m0_half(128), 1.0f);
    EXPECT_EQ(e8m0_half(255), std::ldexp(1.0f, 127));
}

// The quantizers without a gguf-py counterpart: every element within the
// step the format's grid leaves around it, relative to the block's size.
TEST(WeightQuantTest, LowBitAndCodebookErrorsAreBounded) {
    std::mt19937 rng(5);
    const auto x = test::random_floats(rng, 4096);
    // RMS error over the data's RMS (1): about what each format's bits allow.
    const std::pair<GgmlType, double> bounds[] = {{GgmlType::Q2_K, 0.45}, {GgmlType::Q3_K, 0.25},
                                                  {GgmlType::IQ4_NL, 0.12}, {GgmlType::IQ4_XS, 0.12},
                                                  {GgmlType::MXFP4, 0.2}};
    for (const auto& [t, bound] : bounds) {
        std::vector<uint8_t> q(*ggml_row_bytes(t, 4096));
        quantize_row_weights(t, x.data(), q.data(), 4096);
        std::vector<float> back(4096);
        dequantize_row(t, q.data(), back.data(), 4096);
        double se = 0;
        for (int i = 0; i < 4096; ++i) se += (back[i] - x[i]) * static_cast<double>(back[i] - x[i]);
        const double rms = std::sqrt(se / 4096);
        EXPECT_LT(rms, bound) << ggml_type_name(t);
        EXPECT_GT(rms, 0.0) << ggml_type_name(t);
    }
}

// Properties of the activation quantizers (gguf-py has none of them).
TEST(ActivationQuantTest, Q8BlocksRoundToNearestWithinHalfStep) {
    std::mt19937 rng(3);
    auto x = test::random_floats(rng, 512);
    x[5] = 0.0f;
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
        const int64_t bs = block_elems(t);
        std::vector<uint8_t> q(*ggml_row_bytes(t, 512));
        quantize_row(t, x.data(), q.data(), 512);
        std::vector<float> back(512);
        dequantize_row(t, q.data(), back.data(), 512);
        for (int64_t b = 0; b < 512 / bs; ++b) {
            float amax = 0;
            for (int64_t j = 0; j < bs; ++j) amax = std::max(amax, std::fabs(x[b * bs + j]));
            const float step = amax / 127.0f;
            for (int64_t j = 0; j < bs; ++j) {
                // fp16 scale rounding adds up to 2^-11 relative on top of half a step.
                EXPECT_LE(std::fabs(back[b * bs + j] - x[b * bs + j]), 0.5f * step + amax * 1e-3f);
            }
        }
    }
}

TEST(ActivationQuantTest, Q8_1SumAndQ8_KBlockSums) {
    std::mt19937 rng(4);
    const auto x = test::random_floats(rng, 256);
    std::vector<BlockQ8_1> q1(8);
    quantize_row(GgmlType::Q8_1, x.data(), q1.data(), 256);
    for (int b = 0; b < 8; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * b + j]));
        int sum = 0;
        for (int8_t v : q1[b].qs) sum += v;
        const float d = amax / 127.0f;
        EXPECT_EQ(q1[b].d, fp32_to_fp16(d));
        EXPECT_EQ(q1[b].s, fp32_to_fp16(d * static_cast<float>(sum)));  // s uses the unrounded d
    }
    BlockQ8_K qk;
    quantize_row(GgmlType::Q8_K, x.data(), &qk, 256);
    for (int g = 0; g < 16; ++g) {
        int sum = 0;
        for (int l = 0; l < 16; ++l) sum += qk.qs[16 * g + l];
        EXPECT_EQ(qk.bsums[g], sum);
    }
    // The largest-magnitude element maps to exactly -127.
    int extreme = 0;
    for (int8_t v : qk.qs) extreme += v == -127;
    EXPECT_GE(extreme, 1);
}

TEST(ActivationQuantTest, Q8_0RoundsHalfToEvenLikeLlamaCppX86) {
    // amax = 127 makes the multiplier exactly 1, so x.5 values are ties.
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;
    x[2] = 3.5f;
    x[3] = -2.5f;
    BlockQ8_0 q;
    quantize_row(GgmlType::Q8_0, x.data(), &q, 32);
    EXPECT_EQ(q.qs[0], 127);
    EXPECT_EQ(q.qs[1], 2);
    EXPECT_EQ(q.qs[2], 4);
    EXPECT_EQ(q.qs[3], -2);
    // The weight (reference) quantizer rounds half away from zero instead.
    quantize_row_weights(GgmlType::Q8_0, x.data(), &q, 32);
    EXPECT_EQ(q.qs[1], 3);
    EXPECT_EQ(q.qs[3], -3);
}

TEST(ActivationQuantTest, ZeroRowsGiveZeroBlocks) {
    std::vector<float> x(256, 0.0f), back(256, 1.0f);
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K, GgmlType::F16, GgmlType::BF16}) {
        std::vector<uint8_t> q(*ggml_row_bytes(t, 256), 0xAB);
        quantize_row(t, x.data(), q.data(), 256);
        dequantize_row(t, q.data(), back.data(), 256);
        for (float v : back) ASSERT_EQ(v, 0.0f) << ggml_type_name(t);
    }
}

TEST(VecDotTest, ScalarMatchesDoublePrecisionReference) {
    std::mt19937 rng(11);
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                       GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                       GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4}) {
        for (int64_t n : {256, 768, 2048}) {
            const auto w = test::random_weight_row(rng, t, n);
            const auto xa = test::random_floats(rng, n, 3.0f);
            const GgmlType at = activation_type_for(t);
            std::vector<uint8_t> a(*ggml_row_bytes(at, n));
            quantize_row(at, xa.data(), a.data(), n);
            std::vector<float> wd(n), ad(n);
            dequantize_row(t, w.data(), wd.data(), n);
            dequantize_row(at, a.data(), ad.data(), n);
            double ref = 0.0;
            for (int64_t i = 0; i < n; ++i) ref += static_cast<double>(wd[i]) * ad[i];
            const float got = vec_dot(t, n, w.data(), a.data());
            // Float accumulation over n/32 blocks, plus for Q8_1 partners the
            // fp16 rounding of s = d * sum(q) (2^-11 relative of each m * s).
            const double tol = 1e-5 * test::dot_magnitude(wd, ad) +
                               (at == GgmlType::Q8_1 ? 1e-3 * test::dot_magnitude(wd, ad) : 0.0);
            EXPECT_NEAR(got, ref, tol) << ggml_type_name(t) << " n=" << n;
        }
    }
}

TEST(QuantTypesTest, SupportedSetAndActivationPartners) {
    EXPECT_TRUE(is_supported_weight_type(GgmlType::Q4_1));
    EXPECT_TRUE(is_supported_weight_type(GgmlType::Q2_K));
    EXPECT_TRUE(is_supported_weight_type(GgmlType::MXFP4));
    EXPECT_FALSE(is_supported_weight_type(GgmlType::Q8_K));
    EXPECT_FALSE(is_supported_weight_type(GgmlType::Q8_1));
    EXPECT_EQ(activation_type_for(GgmlType::Q4_0), GgmlType::Q8_0);
    EXPECT_EQ(activation_type_for(GgmlType::Q5_0), GgmlType::Q8_0);
    EXPECT_EQ(activation_type_for(GgmlType::Q8_0), GgmlType::Q8_0);
    EXPECT_EQ(activation_type_for(GgmlType::Q4_1), GgmlType::Q8_1);
    EXPECT_EQ(activation_type_for(GgmlType::Q5_1), GgmlType::Q8_1);
    EXPECT_EQ(activation_type_for(GgmlType::Q4_K), GgmlType::Q8_K);
    EXPECT_EQ(activation_type_for(GgmlType::Q6_K), GgmlType::Q8_K);
    EXPECT_EQ(activation_type_for(GgmlType::Q2_K), GgmlType::Q8_K);
    EXPECT_EQ(activation_type_for(GgmlType::Q3_K), GgmlType::Q8_K);
    EXPECT_EQ(activation_type_for(GgmlType::IQ4_XS), GgmlType::Q8_K);
    EXPECT_EQ(activation_type_for(GgmlType::IQ4_NL), GgmlType::Q8_0);
    EXPECT_EQ(activation_type_for(GgmlType::MXFP4), GgmlType::Q8_0);
    EXPECT_EQ(activation_type_for(GgmlType::F16), GgmlType::F16);
    EXPECT_EQ(activation_type_for(GgmlType::BF16), GgmlType::BF16);
    EXPECT_EQ(activation_type_for(GgmlType::F32), GgmlType::F32);
}

}  // namespace
}  // namespace tessera
