// The Hadamard rotation of a quantized KV cache: it is the Sylvester
// Hadamard matrix (checked element by element against its closed form), it
// is orthonormal and its own inverse, it keeps dot products (scores), and on
// a row with an outlier it lowers Q8_0's round-trip error, which is why the
// cache uses it. The size rule follows kernels/kv_rotation.h.
#include "kernels/kv_rotation.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "tensor/kv_type.h"
#include "tensor/quant.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

TEST(KvRotation, EqualsTheSylvesterMatrix) {
    for (int size : {1, 2, 8, 64, 256}) {
        for (int col = 0; col < size; ++col) {
            std::vector<float> e(static_cast<size_t>(size), 0.0f);
            e[static_cast<size_t>(col)] = 1.0f;
            hadamard_blocks(e.data(), size, size);
            for (int row = 0; row < size; ++row) {
                // H[row][col] = (-1)^popcount(row & col) / sqrt(size)
                const float sign = std::popcount(static_cast<unsigned>(row & col)) % 2 ? -1.0f : 1.0f;
                ASSERT_NEAR(e[static_cast<size_t>(row)], sign / std::sqrt(static_cast<float>(size)), 1e-6f)
                    << "size " << size << " H[" << row << "][" << col << "]";
            }
        }
    }
}

TEST(KvRotation, IsItsOwnInverseAndKeepsDotProducts) {
    std::mt19937 rng(7);
    const int64_t n = 4 * 128;  // four heads
    for (int size : {64, 128}) {
        const auto q = test::random_floats(rng, n, 3.0f), k = test::random_floats(rng, n, 3.0f);
        auto rq = q, rk = k;
        hadamard_blocks(rq.data(), n, size);
        hadamard_blocks(rk.data(), n, size);
        for (int64_t h = 0; h < n; h += 128) {  // per head, as attention scores them
            double dot = 0, rdot = 0;
            for (int64_t i = h; i < h + 128; ++i) {
                dot += double{q[i]} * k[i];
                rdot += double{rq[i]} * rk[i];
            }
            EXPECT_NEAR(rdot, dot, 1e-4 * (1 + std::fabs(dot)));
        }
        ASSERT_NE(rq, q);
        hadamard_blocks(rq.data(), n, size);
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(rq[i], q[i], 1e-5f) << i;
    }
}

// Round trip of a row through Q8_0, optionally rotated before and after.
double q8_round_trip_error(std::vector<float> x, int rotation) {
    const std::vector<float> orig = x;
    if (rotation) hadamard_blocks(x.data(), static_cast<int64_t>(x.size()), rotation);
    std::vector<uint8_t> q(static_cast<size_t>(kv_row_bytes(GgmlType::Q8_0, static_cast<int64_t>(x.size()))));
    quantize_row(GgmlType::Q8_0, x.data(), q.data(), static_cast<int64_t>(x.size()));
    dequantize_row(GgmlType::Q8_0, q.data(), x.data(), static_cast<int64_t>(x.size()));
    if (rotation) hadamard_blocks(x.data(), static_cast<int64_t>(x.size()), rotation);
    double err = 0;
    for (size_t i = 0; i < x.size(); ++i) err += (x[i] - orig[i]) * double{x[i] - orig[i]};
    return err;
}

TEST(KvRotation, LowersQ8ErrorOfARowWithOutliers) {
    std::mt19937 rng(11);
    auto x = test::random_floats(rng, 128, 1.0f);
    x[3] = 40.0f;  // outlier channels, as RoPE'd keys have
    x[70] = -25.0f;
    const double plain = q8_round_trip_error(x, 0), rotated = q8_round_trip_error(x, 128);
    EXPECT_LT(rotated, plain / 2) << "plain " << plain << " rotated " << rotated;
}

TEST(KvRotation, SizesFollowTheTypeAndHeadDim) {
    EXPECT_EQ(k_rotation_size(GgmlType::Q8_0, 64), 64);
    EXPECT_EQ(k_rotation_size(GgmlType::Q8_0, 128), 128);
    EXPECT_EQ(k_rotation_size(GgmlType::Q8_0, 256), 256);
    EXPECT_EQ(k_rotation_size(GgmlType::Q8_0, 192), 64);
    EXPECT_EQ(k_rotation_size(GgmlType::Q8_0, 96), 0);  // not a multiple of 64
    EXPECT_EQ(v_rotation_size(GgmlType::Q8_0, 256), 64);
    EXPECT_EQ(v_rotation_size(GgmlType::Q8_0, 96), 0);
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
        EXPECT_EQ(k_rotation_size(t, 128), 0);
        EXPECT_EQ(v_rotation_size(t, 128), 0);
    }
}

}  // namespace
}  // namespace tessera
