// matmul against a plain loop over the scalar reference vec_dot, on odd
// shapes (one row, rows not a multiple of the tile, 1..7 and 70 tokens), with
// one and several threads; plus embedding_row.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

struct Matrix {
    std::vector<uint8_t> bytes;
    WeightMatrix view;
};

Matrix random_matrix(std::mt19937& rng, GgmlType t, int64_t rows, int64_t cols) {
    Matrix m;
    const size_t rb = *ggml_row_bytes(t, cols);
    for (int64_t r = 0; r < rows; ++r) {
        const auto row = test::random_weight_row(rng, t, cols);
        m.bytes.insert(m.bytes.end(), row.begin(), row.end());
    }
    m.view = WeightMatrix{t, m.bytes.data(), rows, cols, rb};
    return m;
}

// y_ref[t, r] from the scalar reference, and a tolerance per output.
void reference(const Matrix& m, const std::vector<float>& x, int64_t n_tok, std::vector<float>& y,
               std::vector<double>& tol) {
    const WeightMatrix& w = m.view;
    const GgmlType at = activation_type_for(w.type);
    std::vector<uint8_t> a(*ggml_row_bytes(at, w.cols));
    std::vector<float> wd(w.cols), ad(w.cols);
    y.assign(n_tok * w.rows, 0.0f);
    tol.assign(n_tok * w.rows, 0.0);
    for (int64_t t = 0; t < n_tok; ++t) {
        quantize_row(at, x.data() + t * w.cols, a.data(), w.cols);
        dequantize_row(at, a.data(), ad.data(), w.cols);
        for (int64_t r = 0; r < w.rows; ++r) {
            const uint8_t* row = w.data + r * w.row_bytes;
            y[t * w.rows + r] = vec_dot(w.type, w.cols, row, a.data());
            dequantize_row(w.type, row, wd.data(), w.cols);
            tol[t * w.rows + r] = 2e-6 * test::dot_magnitude(wd, ad) + 1e-6;
        }
    }
}

TEST(MatmulTest, MatchesReferenceOnOddShapes) {
    std::mt19937 rng(31);
    ThreadPool pool1(1), pool3(3);
    std::vector<uint8_t> scratch;
    const bool sanitized = std::getenv("TESSERA_SANITIZED") != nullptr;
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                       GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K,
                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                       GgmlType::MXFP4}) {
        const int64_t cols = block_elems(t) == 1 ? 45 : block_elems(t) * 3;
        for (int64_t rows : {int64_t{1}, int64_t{17}, int64_t{40}}) {
            const Matrix m = random_matrix(rng, t, rows, cols);
            for (int64_t n_tok : {1, 2, 3, 4, 5, 6, 7, 70}) {
                if (sanitized && n_tok == 70) continue;
                const auto x = test::random_floats(rng, n_tok * cols);
                std::vector<float> ref;
                std::vector<double> tol;
                reference(m, x, n_tok, ref, tol);
                for (ThreadPool* pool : {&pool1, &pool3}) {
                    std::vector<float> y(n_tok * rows, NAN);
                    matmul(m.view, x.data(), n_tok, y.data(), *pool, scratch);
                    for (size_t i = 0; i < y.size(); ++i) {
                        ASSERT_NEAR(y[i], ref[i], tol[i]) << ggml_type_name(t) << " rows=" << rows
                                                          << " n_tok=" << n_tok << " threads=" << pool->size()
                                                          << " i=" << i;
                    }
                }
            }
        }
    }
}

TEST(MatmulTest, BatchedRowsEqualSingleTokenRowsBitForBit) {
    std::mt19937 rng(32);
    ThreadPool pool(2);
    std::vector<uint8_t> scratch;
    for (GgmlType t : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,
                       GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL,
                       GgmlType::IQ4_XS, GgmlType::MXFP4, GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
        const int64_t cols = block_elems(t) == 1 ? 64 : block_elems(t) * 2, rows = 33, n_tok = 9;
        const Matrix m = random_matrix(rng, t, rows, cols);
        const auto x = test::random_floats(rng, n_tok * cols);
        std::vector<float> batched(n_tok * rows), single(rows);
        matmul(m.view, x.data(), n_tok, batched.data(), pool, scratch);
        for (int64_t tk = 0; tk < n_tok; ++tk) {
            matmul(m.view, x.data() + tk * cols, 1, single.data(), pool, scratch);
            for (int64_t r = 0; r < rows; ++r) {
                ASSERT_EQ(f32_to_bits(single[r]), f32_to_bits(batched[tk * rows + r])) << ggml_type_name(t);
            }
        }
    }
}

// The tiled kernels (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 on ActQuads, Q4_K, Q5_K,
// Q6_K on ActSuperQ8_K, F16 and BF16 on widened rows) split rows and tokens
// into register tiles of several shapes; whatever tiles a token lands in
// (token counts off the tile and the 80-token task block, odd and single
// rows, any thread count) its outputs must equal the one-token run bit for
// bit.
TEST(MatmulTest, TiledResultsDoNotDependOnTokenRowOrThreadCounts) {
    std::mt19937 rng(37);
    ThreadPool pool1(1), pool2(2), pool3(3);
    std::vector<uint8_t> scratch;
    const bool sanitized = std::getenv("TESSERA_SANITIZED") != nullptr;
    const int64_t max_tok = sanitized ? 17 : 83;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::BF16}) {
        // F16, BF16: widened activations; an odd last 8-element step and a tail.
        const int64_t short_cols = block_elems(t) == 1 ? 109 : block_elems(t) * (block_elems(t) == kQKK ? 3 : 5);
        // 98 legacy blocks: long rows, which full 8-token tiles of the VNNI
        // kernels take many rows a call (RowsKernel::max_rows), 83 of them a
        // task's calls of every size.
        std::vector<std::pair<int64_t, int64_t>> shapes = {{1, short_cols}, {2, short_cols}, {3, short_cols},
                                                           {5, short_cols}, {35, short_cols}};
        if (block_elems(t) == kQK) shapes.emplace_back(83, 98 * kQK);
        for (const auto& [rows, cols] : shapes) {
            const Matrix m = random_matrix(rng, t, rows, cols);
            const auto x = test::random_floats(rng, max_tok * cols);
            std::vector<float> single(max_tok * rows);
            for (int64_t tk = 0; tk < max_tok; ++tk) {
                matmul(m.view, x.data() + tk * cols, 1, single.data() + tk * rows, pool1, scratch);
            }
            for (int64_t n_tok : {2, 8, 9, 15, 16, 17, 81, 83}) {
                if (n_tok > max_tok) continue;
                for (ThreadPool* pool : {&pool1, &pool2, &pool3}) {
                    std::vector<float> y(n_tok * rows, NAN);
                    matmul(m.view, x.data(), n_tok, y.data(), *pool, scratch);
                    for (size_t i = 0; i < y.size(); ++i) {
                        ASSERT_EQ(f32_to_bits(single[i]), f32_to_bits(y[i]))
                            << ggml_type_name(t) << " rows=" << rows << " n_tok=" << n_tok
                            << " threads=" << pool->size() << " i=" << i;
                    }
                }
            }
        }
    }
}

// F16 / BF16 tasks go through their tokens a chunk of rows at a time (512 KB
// of weights): with rows of 32 KB a chunk is 16 rows, and 161 tokens on one
// thread make tasks of 32 rows (three token blocks), so tasks run in several
// chunks, whose outputs must still equal the one-token run bit for bit.
TEST(MatmulTest, WidenedRowChunksGiveTheOneTokenBits) {
    std::mt19937 rng(38);
    ThreadPool pool1(1), pool2(2);
    std::vector<uint8_t> scratch;
    const int64_t rows = 70, cols = 16413, n_tok = 161;
    for (GgmlType t : {GgmlType::F16, GgmlType::BF16}) {
        const Matrix m = random_matrix(rng, t, rows, cols);
        const auto x = test::random_floats(rng, n_tok * cols);
        std::vector<float> single(n_tok * rows);
        for (int64_t tk = 0; tk < n_tok; ++tk) {
            matmul(m.view, x.data() + tk * cols, 1, single.data() + tk * rows, pool1, scratch);
        }
        for (ThreadPool* pool : {&pool1, &pool2}) {
            std::vector<float> y(n_tok * rows, NAN);
            matmul(m.view, x.data(), n_tok, y.data(), *pool, scratch);
            for (size_t i = 0; i < y.size(); ++i) {
                ASSERT_EQ(f32_to_bits(single[i]), f32_to_bits(y[i]))
                    << ggml_type_name(t) << " threads=" << pool->size() << " i=" << i;
            }
        }
    }
}

TEST(MatmulTest, GroupEqualsSeparateMatmulsBitForBit) {
    std::mt19937 rng(36);
    ThreadPool pool(3);
    std::vector<uint8_t> scratch;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                       GgmlType::Q5_K, GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
        const int64_t cols = block_elems(t) == 1 ? 64 : block_elems(t) * 2;
        // Q4_K and Q5_K group with Q6_K (as Q4_K_M / Q5_K_M files store some
        // V projections): both read the same prepared activations.
        const bool k_quant = t == GgmlType::Q4_K || t == GgmlType::Q5_K;
        const GgmlType tb = k_quant ? GgmlType::Q6_K : t;
        const Matrix a = random_matrix(rng, t, 37, cols), b = random_matrix(rng, tb, 5, cols),
                     c = random_matrix(rng, t, 64, cols);
        for (int64_t n_tok : {1, 6, 70}) {
            const auto x = test::random_floats(rng, n_tok * cols);
            std::vector<float> ya(n_tok * 37), yb(n_tok * 5), yc(n_tok * 64), ref;
            const MatmulOut outs[] = {{&a.view, ya.data()}, {&b.view, yb.data()}, {&c.view, yc.data()}};
            matmul_group(outs, x.data(), n_tok, pool, scratch);
            for (const auto& [m, y] : {std::pair{&a, &ya}, std::pair{&b, &yb}, std::pair{&c, &yc}}) {
                ref.assign(y->size(), NAN);
                matmul(m->view, x.data(), n_tok, ref.data(), pool, scratch);
                for (size_t i = 0; i < ref.size(); ++i) {
                    ASSERT_EQ(f32_to_bits(ref[i]), f32_to_bits((*y)[i])) << ggml_type_name(t) << " " << n_tok;
                }
            }
        }
    }
}

TEST(MatmulTest, EveryLevelAgreesWithScalarLevel) {
    std::mt19937 rng(33);
    ThreadPool pool(2);
    std::vector<uint8_t> scratch;
    const Matrix m = random_matrix(rng, GgmlType::Q4_1, 19, 96);
    const auto x = test::random_floats(rng, 5 * 96);
    std::vector<float> ref, tol_unused_y;
    std::vector<double> tol;
    reference(m, x, 5, ref, tol);
    for (int l = 0; l <= static_cast<int>(best_simd_level()); ++l) {
        std::vector<float> y(5 * 19);
        matmul(m.view, x.data(), 5, y.data(), pool, scratch, static_cast<SimdLevel>(l));
        for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], tol[i]) << l;
    }
}

TEST(MatmulTest, ScratchIsReusedOnceWarm) {
    std::mt19937 rng(34);
    ThreadPool pool(2);
    std::vector<uint8_t> scratch;
    const Matrix m = random_matrix(rng, GgmlType::Q8_0, 8, 64);
    const auto x = test::random_floats(rng, 16 * 64);
    std::vector<float> y(16 * 8);
    matmul(m.view, x.data(), 16, y.data(), pool, scratch);
    const uint8_t* data = scratch.data();
    for (int64_t n_tok : {1, 16, 7}) {
        matmul(m.view, x.data(), n_tok, y.data(), pool, scratch);
        EXPECT_EQ(scratch.data(), data);
    }
}

TEST(EmbeddingRowTest, ReturnsTheDequantizedRow) {
    std::mt19937 rng(35);
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::F16, GgmlType::Q6_K}) {
        const int64_t n_embd = block_elems(t) == 1 ? 48 : block_elems(t) * 2;
        const Matrix m = random_matrix(rng, t, 5, n_embd);
        std::vector<float> got(n_embd), want(n_embd);
        embedding_row(t, m.view.data, m.view.row_bytes, 3, n_embd, got.data());
        dequantize_row(t, m.view.data + 3 * m.view.row_bytes, want.data(), n_embd);
        EXPECT_EQ(got, want) << ggml_type_name(t);
    }
}

}  // namespace
}  // namespace tessera
