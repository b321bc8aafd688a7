// The AMX tiles' activation layout checked on any CPU: a scalar model of one
// tile multiply (int8 dot products of 4-byte groups, C[t][r] += A[t][4k + e]
// * B[k][4r + e], as TDPBUSD / TDPBSSD define them) reads the rows and group
// scales prepare_amx_act_row writes, against weights this test lays out in
// the tile unit's B layout (four bytes of each of 16 rows per 64-byte row),
// and must give the scalar reference's dots for Q8_0, Q4_0 (Q8_0
// activations) and Q4_1 (Q8_1: the second block float, d * sum).
//
// Partial by design: the weight unpack and the float side live in
// kernels/cpu/amx_tiles_x86.cpp behind the tile intrinsics and run only on
// AMX CPUs (amx_tiles_test.cpp); this covers the half of the tile logic
// that is plain C++. Sums are in double here, so the check is a tolerance,
// not the kernels' bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/amx_tiles.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

// Element i of a block's integer weights and its floats: w = d * q + m.
struct WeightBlock {
    int q[kQK];
    float d = 0.0f, m = 0.0f;
};

WeightBlock decode_block(GgmlType t, const uint8_t* bytes) {
    WeightBlock out;
    if (t == GgmlType::Q8_0) {
        const auto* b = reinterpret_cast<const BlockQ8_0*>(bytes);
        for (int i = 0; i < kQK; ++i) out.q[i] = b->qs[i];
        out.d = fp16_to_fp32(b->d);
    } else if (t == GgmlType::Q4_0) {
        const auto* b = reinterpret_cast<const BlockQ4_0*>(bytes);
        for (int i = 0; i < kQK / 2; ++i) out.q[i] = (b->qs[i] & 0xF) - 8, out.q[i + 16] = (b->qs[i] >> 4) - 8;
        out.d = fp16_to_fp32(b->d);
    } else {  // Q4_1
        const auto* b = reinterpret_cast<const BlockQ4_1*>(bytes);
        for (int i = 0; i < kQK / 2; ++i) out.q[i] = b->qs[i] & 0xF, out.q[i + 16] = b->qs[i] >> 4;
        out.d = fp16_to_fp32(b->d), out.m = fp16_to_fp32(b->m);
    }
    return out;
}

// One tile multiply of K = 16 bytes (a half block): A is 16 tokens x 16
// bytes, B is 4 rows x (16 weight rows x 4 bytes); C is 16 x 16 int32.
void tile_dot(const int8_t (&a)[kAmxTileTokens][16], const int (&b)[4][kAmxTileRows * 4],
              int32_t (&c)[kAmxTileTokens][kAmxTileRows]) {
    for (int t = 0; t < kAmxTileTokens; ++t) {
        for (int r = 0; r < kAmxTileRows; ++r) {
            for (int k = 0; k < 4; ++k) {
                for (int e = 0; e < 4; ++e) c[t][r] += a[t][4 * k + e] * b[k][4 * r + e];
            }
        }
    }
}

TEST(AmxActLayoutEmulatedTest, ModelTileOverPreparedRowsGivesTheReferenceDots) {
    std::mt19937 rng(43);
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1}) {
        const GgmlType at = activation_type_for(t);
        const int64_t nb = 5, n = nb * kQK;
        const size_t w_stride = *ggml_row_bytes(t, n), q_stride = *ggml_row_bytes(at, n);
        const size_t a_stride = amx_act_row_bytes(at, n), group_floats = amx_scale_floats(at, n);
        const size_t block_bytes = *ggml_row_bytes(t, kQK);
        const size_t floats_per_block = group_floats / nb / kAmxTileTokens;
        ASSERT_EQ(floats_per_block, at == GgmlType::Q8_1 ? 2u : 1u) << ggml_type_name(at);

        std::vector<uint8_t> w;
        for (int r = 0; r < kAmxTileRows; ++r) {
            const auto row = test::random_weight_row(rng, t, n);
            w.insert(w.end(), row.begin(), row.end());
        }
        std::vector<uint8_t> q(q_stride * kAmxTileTokens), act(a_stride * kAmxTileTokens);
        std::vector<float> scales(group_floats, NAN);
        for (int tk = 0; tk < kAmxTileTokens; ++tk) {
            quantize_row(at, test::random_floats(rng, n, 2.0f).data(), q.data() + tk * q_stride, n);
            prepare_amx_act_row(at, q.data() + tk * q_stride, n, act.data() + tk * a_stride, scales.data(), tk);
        }

        std::vector<double> got(kAmxTileTokens * kAmxTileRows, 0.0);
        for (int64_t b = 0; b < nb; ++b) {
            WeightBlock blocks[kAmxTileRows];
            for (int r = 0; r < kAmxTileRows; ++r) {
                blocks[r] = decode_block(t, w.data() + r * w_stride + b * block_bytes);
            }
            int32_t c[kAmxTileTokens][kAmxTileRows] = {};
            for (int h = 0; h < 2; ++h) {
                // A: each token's half h as the prepared row holds it.
                int8_t a[kAmxTileTokens][16];
                for (int tk = 0; tk < kAmxTileTokens; ++tk) {
                    const uint8_t* half = act.data() + tk * a_stride + b * kQK + h * 16;
                    for (int i = 0; i < 16; ++i) a[tk][i] = static_cast<int8_t>(half[i]);
                }
                // B: half h is elements 8k + 4h + e (amx_tiles.h), k < 4.
                int bt[4][kAmxTileRows * 4];
                for (int k = 0; k < 4; ++k) {
                    for (int r = 0; r < kAmxTileRows; ++r) {
                        for (int e = 0; e < 4; ++e) bt[k][4 * r + e] = blocks[r].q[8 * k + 4 * h + e];
                    }
                }
                tile_dot(a, bt, c);
            }
            for (int tk = 0; tk < kAmxTileTokens; ++tk) {
                const float* f = scales.data() + b * floats_per_block * kAmxTileTokens + tk;
                for (int r = 0; r < kAmxTileRows; ++r) {
                    double sum = static_cast<double>(blocks[r].d) * f[0] * c[tk][r];
                    if (floats_per_block == 2) sum += static_cast<double>(blocks[r].m) * f[kAmxTileTokens];
                    got[tk * kAmxTileRows + r] += sum;
                }
            }
        }

        const MultiDotFn dot = find_multi_dot(t, SimdLevel::Scalar);
        for (int tk = 0; tk < kAmxTileTokens; ++tk) {
            for (int r = 0; r < kAmxTileRows; ++r) {
                float want = 0.0f;
                dot(n, w.data() + r * w_stride, q.data() + tk * q_stride, q_stride, 1, &want);
                const double g = got[tk * kAmxTileRows + r];
                EXPECT_NEAR(g, want, 1e-4 * (1.0 + std::fabs(want)))
                    << ggml_type_name(t) << " token " << tk << " row " << r;
            }
        }
    }
}

}  // namespace
}  // namespace tessera
