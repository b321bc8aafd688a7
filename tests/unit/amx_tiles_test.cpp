// The AMX tiles give the VNNI kernels' bits (and so the sum orders the dot
// tests pin): tile by tile on odd shapes (1-7 and 18 blocks, 1, 5 and
// 16 rows, 16 and 32 tokens), and through matmul at token counts with and
// without a remainder for the VNNI tiles, on one and two threads. Skipped
// where the CPU (or the OS) gives no AMX-INT8.
#include "kernels/amx_tiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "kernels/matmul.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

constexpr GgmlType kAmxTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                   GgmlType::Q4_K};

std::vector<uint8_t> random_rows(std::mt19937& rng, GgmlType t, int64_t rows, int64_t cols) {
    std::vector<uint8_t> bytes;
    for (int64_t r = 0; r < rows; ++r) {
        const auto row = test::random_weight_row(rng, t, cols);
        bytes.insert(bytes.end(), row.begin(), row.end());
    }
    return bytes;
}

TEST(AmxTilesTest, TilesGiveTheVnniBits) {
    if (best_simd_level() < SimdLevel::Avx512Amx) GTEST_SKIP() << "no AMX-INT8 here";
    std::mt19937 rng(41);
    for (GgmlType t : kAmxTypes) {
        const AmxTilesFn tiles = find_amx_tiles(t, SimdLevel::Avx512Amx);
        ASSERT_NE(tiles, nullptr);
        EXPECT_EQ(find_amx_tiles(t, SimdLevel::Avx512Vnni), nullptr);
        const MultiDotFn dot = find_multi_dot(t, SimdLevel::Avx512Vnni);
        const GgmlType at = activation_type_for(t);
        for (int64_t nb : {1, 2, 3, 4, 5, 6, 7, 18}) {
            const int64_t n = nb * block_elems(t);
            const size_t w_stride = *ggml_row_bytes(t, n), q_stride = *ggml_row_bytes(at, n);
            const size_t a_stride = amx_act_row_bytes(at, n);
            const auto w = random_rows(rng, t, kAmxTileRows, n);
            for (int n_tok : {16, 32}) {
                const size_t group_floats = amx_scale_floats(at, n);
                std::vector<uint8_t> q(q_stride * n_tok), act(a_stride * n_tok);
                std::vector<float> scales(group_floats * n_tok / kAmxTileTokens, NAN);
                for (int tk = 0; tk < n_tok; ++tk) {
                    quantize_row(at, test::random_floats(rng, n, 2.0f).data(), q.data() + tk * q_stride, n);
                    prepare_amx_act_row(at, q.data() + tk * q_stride, n, act.data() + tk * a_stride,
                                        scales.data() + tk / kAmxTileTokens * group_floats, tk % kAmxTileTokens);
                }
                // 64-aligned, as matmul hands it out.
                std::vector<uint8_t> scratch_bytes(amx_weight_scratch_bytes(t, n) + 63);
                auto* scratch = reinterpret_cast<uint8_t*>(
                    (reinterpret_cast<uintptr_t>(scratch_bytes.data()) + 63) / 64 * 64);
                for (int n_rows : {1, 5, 16}) {
                    std::vector<float> out(n_tok * kAmxTileRows, NAN);
                    tiles(n, w.data(), w_stride, n_rows, act.data(), a_stride, scales.data(), n_tok, out.data(),
                          kAmxTileRows, scratch);
                    for (int r = 0; r < kAmxTileRows; ++r) {
                        for (int tk = 0; tk < n_tok; ++tk) {
                            const float got = out[tk * kAmxTileRows + r];
                            if (r >= n_rows) {
                                ASSERT_TRUE(std::isnan(got)) << "row " << r << " past n_rows was written";
                                continue;
                            }
                            float want = 0.0f;
                            dot(n, w.data() + r * w_stride, q.data() + tk * q_stride, q_stride, 1, &want);
                            ASSERT_EQ(f32_to_bits(got), f32_to_bits(want))
                                << ggml_type_name(t) << " blocks " << nb << " rows " << n_rows << " row " << r
                                << " token " << tk;
                        }
                    }
                }
            }
        }
    }
}

TEST(AmxTilesTest, MatmulAtTheAmxLevelEqualsTheVnniLevel) {
    if (best_simd_level() < SimdLevel::Avx512Amx) GTEST_SKIP() << "no AMX-INT8 here";
    std::mt19937 rng(42);
    std::vector<uint8_t> scratch;
    for (GgmlType t : kAmxTypes) {
        // A last task of 5 rows; 5 blocks: a partial lane step (legacy formats).
        const int64_t rows = 37, cols = 5 * block_elems(t);
        const auto w = random_rows(rng, t, rows, cols);
        const WeightMatrix view{t, w.data(), rows, cols, *ggml_row_bytes(t, cols)};
        for (int threads : {1, 2}) {
            ThreadPool pool(threads);
            for (int64_t n_tok : {16, 31, 48, 100}) {
                const auto x = test::random_floats(rng, n_tok * cols);
                std::vector<float> amx(n_tok * rows, NAN), vnni(n_tok * rows, NAN);
                matmul(view, x.data(), n_tok, amx.data(), pool, scratch, SimdLevel::Avx512Amx);
                matmul(view, x.data(), n_tok, vnni.data(), pool, scratch, SimdLevel::Avx512Vnni);
                for (size_t i = 0; i < amx.size(); ++i) {
                    ASSERT_EQ(f32_to_bits(amx[i]), f32_to_bits(vnni[i]))
                        << ggml_type_name(t) << " threads " << threads << " n_tok " << n_tok << " at " << i;
                }
            }
        }
    }
}

}  // namespace
}  // namespace tessera
