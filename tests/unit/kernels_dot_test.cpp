// Every SIMD dot kernel this CPU can run against the scalar reference
// (tensor/quant.h vec_dot), for every supported weight format, odd row
// lengths and every token count a kernel call takes.
#include "kernels/dot_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/act_quads.h"
#include "kernels/convert_row.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quant.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

const GgmlType kWeightTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0,
                                 GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                 GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                 GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4};

std::vector<SimdLevel> runnable_levels() {
    std::vector<SimdLevel> levels;
    for (int l = 0; l <= static_cast<int>(best_simd_level()); ++l) levels.push_back(static_cast<SimdLevel>(l));
    return levels;
}

TEST(DotKernelsTest, EveryLevelMatchesScalarReference) {
    std::mt19937 rng(21);
    for (GgmlType t : kWeightTypes) {
        const int64_t bs = block_elems(t);
        const GgmlType at = activation_type_for(t);
        // Lengths: one block, an odd block count, and (for F32/F16) not a multiple of 8.
        std::vector<int64_t> lengths = {bs, bs * 3, bs * 9};
        if (bs == 1) lengths = {1, 7, 8, 13, 64, 577};
        for (int64_t n : lengths) {
            const auto w = test::random_weight_row(rng, t, n);
            const size_t stride = *ggml_row_bytes(at, n);
            std::vector<uint8_t> acts(stride * kMaxDotTokens);
            std::vector<std::vector<float>> act_f(kMaxDotTokens);
            for (int j = 0; j < kMaxDotTokens; ++j) {
                act_f[j] = test::random_floats(rng, n, 2.0f);
                quantize_row(at, act_f[j].data(), acts.data() + j * stride, n);
            }
            std::vector<float> wd(n);
            dequantize_row(t, w.data(), wd.data(), n);
            for (SimdLevel level : runnable_levels()) {
                const MultiDotFn fn = find_multi_dot(t, level);
                for (int n_act = 1; n_act <= kMaxDotTokens; ++n_act) {
                    float out[kMaxDotTokens];
                    fn(n, w.data(), acts.data(), stride, n_act, out);
                    for (int j = 0; j < n_act; ++j) {
                        const float ref = vec_dot(t, n, w.data(), acts.data() + j * stride);
                        std::vector<float> ad(n);
                        dequantize_row(at, acts.data() + j * stride, ad.data(), n);
                        // Same integer block sums; only the float accumulation
                        // order (8 lanes, FMA) differs from the scalar code.
                        const double tol = 2e-6 * test::dot_magnitude(wd, ad) + 1e-6;
                        ASSERT_NEAR(out[j], ref, tol) << ggml_type_name(t) << " n=" << n << " level="
                                                      << simd_level_name(level) << " n_act=" << n_act << " j=" << j;
                    }
                }
            }
        }
    }
}

TEST(DotKernelsTest, ResultDoesNotDependOnTokenCount) {
    // A token's result must be bit-identical whether it is computed alone or
    // alongside others, so prefill and decode give the same logits.
    std::mt19937 rng(22);
    for (GgmlType t : kWeightTypes) {
        const int64_t n = block_elems(t) == 1 ? 100 : block_elems(t) * 5;
        const GgmlType at = activation_type_for(t);
        const auto w = test::random_weight_row(rng, t, n);
        const size_t stride = *ggml_row_bytes(at, n);
        std::vector<uint8_t> acts(stride * kMaxDotTokens);
        for (int j = 0; j < kMaxDotTokens; ++j) {
            const auto x = test::random_floats(rng, n);
            quantize_row(at, x.data(), acts.data() + j * stride, n);
        }
        for (SimdLevel level : runnable_levels()) {
            const MultiDotFn fn = find_multi_dot(t, level);
            float all[kMaxDotTokens];
            fn(n, w.data(), acts.data(), stride, kMaxDotTokens, all);
            for (int j = 0; j < kMaxDotTokens; ++j) {
                float one;
                fn(n, w.data(), acts.data() + j * stride, stride, 1, &one);
                ASSERT_EQ(f32_to_bits(one), f32_to_bits(all[j])) << ggml_type_name(t) << " " << simd_level_name(level);
            }
        }
    }
}

TEST(DotKernelsTest, RowTilesMatchSingleRowsBitForBit) {
    // The register-tiled kernels must give each output exactly what the
    // one-row kernel gives (which the test above checks against the scalar
    // reference), for every tile shape.
    std::mt19937 rng(24);
    // 7 and 10 blocks: a step of four and a partial one of three or two
    // (the AVX-512 pair tiles read two-block tails from their own fields);
    // 50: a row longer than kShortRowMaxBlocks, which one-token tiles take
    // two rows at a time; 98 and 103: rows the AVX-512 pair tiles take in
    // chunks (kChunkedMinBlocks), a last chunk shorter than the others and a
    // tail of two or three. Row counts up to the most a call takes
    // (RowsKernel::max_rows: many rows share each chunk), odd ones included.
    int max_rows = kMaxDotRows;
    for (GgmlType t : kWeightTypes) {
        for (SimdLevel level : runnable_levels()) max_rows = std::max(max_rows, find_rows_dot(t, level).max_rows);
    }
    std::vector<int> row_counts;
    for (int nr = 1; nr <= kMaxDotRows; ++nr) row_counts.push_back(nr);
    for (int nr : {5, 7, 16, max_rows - 1, max_rows}) {
        if (nr > kMaxDotRows && nr <= max_rows) row_counts.push_back(nr);
    }
    for (GgmlType t : kWeightTypes) {
        for (int64_t blocks : {7, 10, 50, 98, 103}) {
            // Float formats: lengths with an odd last 8-element step and a scalar tail.
            const int64_t n = block_elems(t) == 1 ? 96 + blocks : block_elems(t) * blocks;
            const GgmlType at = activation_type_for(t);
            const size_t wb = *ggml_row_bytes(t, n), stride = *ggml_row_bytes(at, n);
            std::vector<uint8_t> w, acts(stride * kMaxDotTokens);
            for (int r = 0; r < max_rows; ++r) {
                const auto row = test::random_weight_row(rng, t, n);
                w.insert(w.end(), row.begin(), row.end());
            }
            for (int j = 0; j < kMaxDotTokens; ++j) {
                const auto x = test::random_floats(rng, n);
                quantize_row(at, x.data(), acts.data() + j * stride, n);
            }
            for (SimdLevel level : runnable_levels()) {
                const RowsKernel rows = find_rows_dot(t, level);
                if (rows.fn == nullptr) continue;
                const MultiDotFn one = find_multi_dot(t, level);
                // The tiled kernel reads its own layout, prepared from the same rows.
                std::vector<uint8_t> tile_acts = acts;
                size_t tile_stride = stride;
                if (rows.layout == ActLayout::Quads) {
                    tile_stride = act_quad_pairs_bytes(at, n);
                    tile_acts.assign(tile_stride * kMaxDotTokens / 2, 0);
                    for (int j = 0; j < kMaxDotTokens; ++j) {
                        prepare_act_quads(at, n, acts.data() + j * stride, j % 2,
                                          tile_acts.data() + j / 2 * tile_stride, level);
                    }
                } else if (rows.layout == ActLayout::Widened) {  // F16 / BF16 rows as floats
                    tile_stride = static_cast<size_t>(n) * sizeof(float);
                    tile_acts.assign(tile_stride * kMaxDotTokens, 0);
                    for (int j = 0; j < kMaxDotTokens; ++j) {
                        find_widen_row(at, level)(acts.data() + j * stride,
                                                  reinterpret_cast<float*>(tile_acts.data() + j * tile_stride), n);
                    }
                }
                for (int nr : row_counts) {
                    if (nr > rows.max_rows) continue;
                    for (int nt = 1; nt <= kMaxDotTokens; ++nt) {
                        // NaN first: an output a tile fails to write must not pass on what an
                        // earlier call (another level, the same bits) left there.
                        std::vector<float> tile(static_cast<size_t>(kMaxDotTokens * max_rows),
                                                std::numeric_limits<float>::quiet_NaN());
                        rows.fn(n, w.data(), wb, nr, tile_acts.data(), tile_stride, nt, tile.data(),
                                static_cast<size_t>(max_rows));
                        for (int r = 0; r < nr; ++r) {
                            float ref[kMaxDotTokens];
                            one(n, w.data() + r * wb, acts.data(), stride, nt, ref);
                            for (int j = 0; j < nt; ++j) {
                                ASSERT_EQ(f32_to_bits(tile[j * max_rows + r]), f32_to_bits(ref[j]))
                                    << ggml_type_name(t) << " " << simd_level_name(level) << " tile " << nr << "x" << nt
                                    << " blocks " << blocks;
                            }
                        }
                    }
                }
            }
        }
    }
}

// K-quants at the integer extremes: every weight bit set (Q4_K nibbles 15,
// Q5_K values 31, 6-bit scales and mins 63; Q6_K values 63, scales -1;
// Q2_K values 3, scales and mins 15; Q3_K values 3, scales 31),
// activations all +-127 or -128. The AVX2 kernels add byte-pair products in
// int16 before widening; this is where that would overflow.
TEST(DotKernelsTest, KQuantExtremesStayExact) {
    constexpr int64_t n = 2 * kQKK;
    const size_t stride = *ggml_row_bytes(GgmlType::Q8_K, n);
    std::vector<uint8_t> acts(stride * 3);
    for (int k = 0; k < 3; ++k) {
        auto* y = reinterpret_cast<BlockQ8_K*>(acts.data() + k * stride);
        const int8_t q = k == 0 ? 127 : k == 1 ? -127 : -128;
        for (int b = 0; b < 2; ++b) {
            y[b].d = 0.01f;
            for (int8_t& v : y[b].qs) v = q;
            for (int16_t& s : y[b].bsums) s = static_cast<int16_t>(16 * q);
        }
    }
    for (GgmlType t : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        std::vector<uint8_t> w(*ggml_row_bytes(t, n), 0xFF);
        const size_t block_bytes = w.size() / 2;
        for (int b = 0; b < 2; ++b) {
            for (size_t field : test::block_f16_fields(t)) {
                const uint16_t h = fp32_to_fp16(0.5f);
                std::memcpy(w.data() + b * block_bytes + field, &h, sizeof h);
            }
        }
        for (SimdLevel level : runnable_levels()) {
            float out[3];
            find_multi_dot(t, level)(n, w.data(), acts.data(), stride, 3, out);
            for (int k = 0; k < 3; ++k) {
                const float ref = vec_dot(t, n, w.data(), acts.data() + k * stride);
                ASSERT_NEAR(out[k], ref, 1e-5 * std::fabs(ref))
                    << ggml_type_name(t) << " " << simd_level_name(level) << " k=" << k;
            }
        }
    }
}

// The codebook formats at their largest values: index bytes all 0x00
// (IQ4 -127), 0x77 (MXFP4 12) or 0xFF (IQ4 113, MXFP4 -12), IQ4_XS scales 31,
// activations all +-127 (their kernels multiply through sign(y, w), see
// dot_lowbit_x86_body.h, so not -128).
TEST(DotKernelsTest, CodebookExtremesStayExact) {
    for (GgmlType t : {GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4}) {
        const int64_t n = 2 * kQKK;
        const GgmlType at = activation_type_for(t);
        const size_t stride = *ggml_row_bytes(at, n);
        std::vector<uint8_t> acts(stride * 2);
        for (int k = 0; k < 2; ++k) {
            const std::vector<float> x(n, k == 0 ? 1.0f : -1.0f);
            quantize_row(at, x.data(), acts.data() + k * stride, n);
        }
        for (uint8_t fill : {uint8_t{0x00}, uint8_t{0x77}, uint8_t{0xFF}}) {
            std::vector<uint8_t> w(*ggml_row_bytes(t, n), fill);
            const size_t block_bytes = ggml_type_info(static_cast<uint32_t>(t))->block_bytes;
            for (size_t off = 0; off < w.size(); off += block_bytes) {
                if (t == GgmlType::MXFP4) {
                    w[off] = 127;  // scale 2^-1
                } else {
                    const uint16_t h = fp32_to_fp16(0.5f);
                    std::memcpy(w.data() + off, &h, sizeof h);
                }
            }
            for (SimdLevel level : runnable_levels()) {
                float out[2];
                find_multi_dot(t, level)(n, w.data(), acts.data(), stride, 2, out);
                for (int k = 0; k < 2; ++k) {
                    const float ref = vec_dot(t, n, w.data(), acts.data() + k * stride);
                    ASSERT_TRUE(ref != 0.0f || (t == GgmlType::MXFP4 && fill == 0)) << ggml_type_name(t);
                    ASSERT_NEAR(out[k], ref, 1e-5 * std::fabs(ref))
                        << ggml_type_name(t) << " " << simd_level_name(level) << " fill " << int{fill} << " k=" << k;
                }
            }
        }
    }
}

// The 32-element formats at the integer extremes: weight bytes all 0xFF
// (Q4 nibbles 15, Q5 values 31 with every fifth bit set, Q8_0 -1) or all 0
// (Q4_0 -8, Q5_0 -16), activations all +-127 or -128. Q5's 31 is the largest
// unsigned byte the AVX2 kernels sum four maddubs pairs of in int16. (Q8_0
// weights skip -128: AVX2 multiplies them through sign(y, w), which needs
// y > -128, and quantize_row never writes -128.)
TEST(DotKernelsTest, LegacyExtremesStayExact) {
    constexpr int64_t n = 5 * kQK;  // one step of four blocks and a tail block
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0}) {
        const GgmlType at = activation_type_for(t);
        const size_t stride = *ggml_row_bytes(at, n);
        std::vector<uint8_t> acts(stride * 3);
        for (int k = 0; k < 3; ++k) {
            const std::vector<float> x(n, k == 0 ? 1.0f : -1.0f);
            quantize_row(at, x.data(), acts.data() + k * stride, n);
        }
        // quantize_row gives +-127; the third row is -128 with the same scale.
        const size_t ab = stride / (n / kQK), q_at = at == GgmlType::Q8_1 ? 4 : 2;
        for (int64_t b = 0; b < n / kQK; ++b) std::memset(acts.data() + 2 * stride + b * ab + q_at, 0x80, kQK);
        const bool has_min = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
        for (uint8_t fill : {uint8_t{0xFF}, uint8_t{0x00}}) {
            std::vector<uint8_t> w(*ggml_row_bytes(t, n), fill);
            const size_t wb = w.size() / (n / kQK);
            for (int64_t b = 0; b < n / kQK; ++b) {
                const uint16_t h = fp32_to_fp16(0.5f);
                std::memcpy(w.data() + b * wb, &h, sizeof h);
                if (has_min) std::memcpy(w.data() + b * wb + 2, &h, sizeof h);
            }
            const int n_act = t == GgmlType::Q8_0 ? 2 : 3;
            for (SimdLevel level : runnable_levels()) {
                float out[3];
                find_multi_dot(t, level)(n, w.data(), acts.data(), stride, n_act, out);
                for (int k = 0; k < n_act; ++k) {
                    const float ref = vec_dot(t, n, w.data(), acts.data() + k * stride);
                    ASSERT_NEAR(out[k], ref, 1e-5 * std::fabs(ref) + 1e-6)
                        << ggml_type_name(t) << " fill=" << int{fill} << " " << simd_level_name(level) << " k=" << k;
                }
            }
        }
    }
}

// The legacy block formats' SIMD sum order, written out in scalar code
// (dot_legacy_x86_body.h): steps of four blocks a, b, c, d whose int32 lane
// sums land in lanes (a a c c b b d d), lane 2k + h of a block holding its
// elements 8j + 4h + e (j, e < 4); per step and lane first the min term
// (Q4_1 / Q5_1: m_w * s_y in a block's first lane), then one FMA of
// d_w * d_y (rounded) times the lane sum; at the end the horizontal sum
// ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)). Missing blocks of a last
// partial step add exact zeros, so they are left out here.
template <class Block>
float quad_order_model(const uint8_t* w_row, const uint8_t* act_row, int64_t nb) {
    constexpr bool kQ8_1 = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>;
    constexpr int kLaneOfBlock[4] = {0, 4, 2, 6};
    float acc[8] = {};
    for (int64_t ib = 0; ib < nb; ++ib) {
        const Block& b = reinterpret_cast<const Block*>(w_row)[ib];
        int32_t wv[32];
        for (int i = 0; i < 32; ++i) {
            if constexpr (std::is_same_v<Block, BlockQ8_0>) {
                wv[i] = b.qs[i];
            } else {
                int32_t v = i < 16 ? (b.qs[i] & 0x0F) : (b.qs[i - 16] >> 4);
                if constexpr (std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>) {
                    uint32_t qh;
                    std::memcpy(&qh, b.qh, sizeof qh);
                    v |= static_cast<int32_t>((qh >> i) & 1) << 4;
                }
                if constexpr (std::is_same_v<Block, BlockQ4_0>) v -= 8;
                if constexpr (std::is_same_v<Block, BlockQ5_0>) v -= 16;
                wv[i] = v;
            }
        }
        const int8_t* yq;
        float yd, ys = 0.0f;
        if constexpr (kQ8_1) {
            const auto& y = reinterpret_cast<const BlockQ8_1*>(act_row)[ib];
            yq = y.qs, yd = fp16_to_fp32(y.d), ys = fp16_to_fp32(y.s);
        } else {
            const auto& y = reinterpret_cast<const BlockQ8_0*>(act_row)[ib];
            yq = y.qs, yd = fp16_to_fp32(y.d);
        }
        const float scale = fp16_to_fp32(b.d) * yd;
        for (int h = 0; h < 2; ++h) {
            int32_t sum = 0;
            for (int j = 0; j < 4; ++j) {
                for (int e = 0; e < 4; ++e) sum += wv[8 * j + 4 * h + e] * yq[8 * j + 4 * h + e];
            }
            float& a = acc[kLaneOfBlock[ib % 4] + h];
            if constexpr (kQ8_1) a = std::fma(fp16_to_fp32(b.m), h == 0 ? ys : 0.0f, a);
            a = std::fma(scale, static_cast<float>(sum), a);
        }
    }
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

TEST(DotKernelsTest, LegacyFormatsFollowTheQuadSumOrder) {
    // Pins the bits every SIMD level and tile gives (the tests above compare
    // them with each other and with the scalar reference within a
    // tolerance): 1-7 blocks cover every partial last step, 18 the 576-wide
    // rows' two-block tail, read from its own fields.
    std::mt19937 rng(25);
    const struct {
        GgmlType type;
        float (*model)(const uint8_t*, const uint8_t*, int64_t);
    } formats[] = {{GgmlType::Q4_0, quad_order_model<BlockQ4_0>},
                   {GgmlType::Q4_1, quad_order_model<BlockQ4_1>},
                   {GgmlType::Q5_0, quad_order_model<BlockQ5_0>},
                   {GgmlType::Q5_1, quad_order_model<BlockQ5_1>},
                   {GgmlType::Q8_0, quad_order_model<BlockQ8_0>}};
    for (const auto& f : formats) {
        const GgmlType at = activation_type_for(f.type);
        for (int64_t nb : {1, 2, 3, 4, 5, 6, 7, 18}) {
            const int64_t n = nb * kQK;
            const auto w = test::random_weight_row(rng, f.type, n);
            const size_t stride = *ggml_row_bytes(at, n);
            std::vector<uint8_t> acts(stride * kMaxDotTokens);
            for (int j = 0; j < kMaxDotTokens; ++j) {
                quantize_row(at, test::random_floats(rng, n, 2.0f).data(), acts.data() + j * stride, n);
            }
            for (SimdLevel level : runnable_levels()) {
                if (level == SimdLevel::Scalar) continue;  // its own order (vec_dot)
                for (int n_act = 1; n_act <= kMaxDotTokens; ++n_act) {
                    float out[kMaxDotTokens];
                    find_multi_dot(f.type, level)(n, w.data(), acts.data(), stride, n_act, out);
                    for (int j = 0; j < n_act; ++j) {
                        ASSERT_EQ(f32_to_bits(out[j]), f32_to_bits(f.model(w.data(), acts.data() + j * stride, nb)))
                            << ggml_type_name(f.type) << " blocks " << nb << " " << simd_level_name(level)
                            << " n_act " << n_act << " token " << j;
                    }
                }
            }
        }
    }
}

TEST(DotKernelsTest, Avx2AndVnniAgreeBitForBit) {
    if (best_simd_level() < SimdLevel::Avx512Vnni) GTEST_SKIP() << "CPU has no AVX-512 VNNI";
    std::mt19937 rng(23);
    for (GgmlType t : kWeightTypes) {
        // Float formats: an odd last 8-element step (VNNI pairs the others) and a tail.
        const int64_t n = block_elems(t) == 1 ? 109 : block_elems(t) * 6;
        const GgmlType at = activation_type_for(t);
        const auto w = test::random_weight_row(rng, t, n);
        const auto x = test::random_floats(rng, n);
        const size_t stride = *ggml_row_bytes(at, n);
        std::vector<uint8_t> a(stride * kMaxDotTokens);
        for (int j = 0; j < kMaxDotTokens; ++j) {
            const auto xj = test::random_floats(rng, n);
            quantize_row(at, (j == 0 ? x : xj).data(), a.data() + j * stride, n);
        }
        // Every token count: VNNI runs several tokens on 512-bit vectors.
        for (int n_act = 1; n_act <= kMaxDotTokens; ++n_act) {
            float r2[kMaxDotTokens], r512[kMaxDotTokens];
            find_multi_dot(t, SimdLevel::Avx2)(n, w.data(), a.data(), stride, n_act, r2);
            find_multi_dot(t, SimdLevel::Avx512Vnni)(n, w.data(), a.data(), stride, n_act, r512);
            for (int j = 0; j < n_act; ++j) {
                EXPECT_EQ(f32_to_bits(r2[j]), f32_to_bits(r512[j])) << ggml_type_name(t) << " n_act=" << n_act;
            }
        }
    }
}

}  // namespace
}  // namespace tessera
