// KvCache storage types: rows convert on store (decoding gives the type's
// rounding of the input), K's keys-in-lanes block layout inverts exactly,
// slot copies (copy-on-write, widening a half block) are exact for every
// type, budgets per block shrink with the type, and the type names and the Q8_0
// head_dim rule reach the user as errors, not aborts.
#include "model/kv_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tensor/quant.h"

namespace tessera {
namespace {

const GgmlType kTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0};

// Decoded K (or V) row of `slot` in `layer`; K gathered from its block's lanes.
std::vector<float> decode(const KvCache& c, int layer, int64_t slot, bool k) {
    const PagedKv kv = c.view(layer);
    std::vector<float> out(static_cast<size_t>(c.kv_dim()));
    if (k) {
        const int bs = c.block_size();
        std::vector<uint8_t> row(static_cast<size_t>(kv.k_row_bytes));
        gather_k_row(kv.k_type, kv.k_pool + slot / bs * bs * kv.k_row_bytes, 0, kv.k_row_bytes, bs,
                     static_cast<int>(slot % bs), row.data());
        dequantize_row(kv.k_type, row.data(), out.data(), c.kv_dim());
    } else {
        dequantize_row(kv.v_type, kv.v_pool + slot * kv.v_row_bytes, out.data(), c.kv_dim());
    }
    return out;
}

TEST(KvCacheTest, KeysInLanesLayoutRoundTripsAndTransposes) {
    // gather_k_row inverts scatter_k_row for every type and block size, head
    // slices included, and F16 element d of key j sits at d * block_size + j.
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255);
    for (GgmlType t : kTypes) {
        for (int bs : {1, 3, 16, 33}) {
            const int64_t rb = kv_row_bytes(t, 128);
            std::vector<uint8_t> rows(static_cast<size_t>(bs * rb)), block(rows.size(), 0);
            std::vector<uint8_t> back(static_cast<size_t>(rb));
            for (auto& b : rows) b = static_cast<uint8_t>(byte(rng));
            for (int j = 0; j < bs; ++j) scatter_k_row(t, rows.data() + j * rb, 0, rb, bs, j, block.data());
            for (int j = 0; j < bs; ++j) {
                gather_k_row(t, block.data(), 0, rb, bs, j, back.data());
                ASSERT_TRUE(std::equal(back.begin(), back.end(), rows.begin() + j * rb))
                    << kv_type_name(t) << " block " << bs;
                const int64_t head1 = kv_row_bytes(t, 64);  // the second head's slice alone
                gather_k_row(t, block.data(), head1, rb - head1, bs, j, back.data());
                ASSERT_TRUE(std::equal(back.begin(), back.begin() + (rb - head1), rows.begin() + j * rb + head1));
            }
            if (t == GgmlType::F16) {
                for (int d : {0, 5, 127}) {
                    for (int j = 0; j < bs; ++j) {
                        ASSERT_EQ(std::memcmp(block.data() + 2 * (d * bs + j), rows.data() + j * rb + 2 * d, 2), 0);
                    }
                }
            }
        }
    }
}

TEST(KvCacheTest, StoreConvertsAndCopySlotsIsExactForEveryType) {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (GgmlType t : kTypes) {
        KvCache cache(2, 2, 64, 4, 4, KvTypes{t, t});
        std::vector<float> k(128), v(128);
        for (int64_t slot = 0; slot < 4; ++slot) {  // block 0
            for (auto& x : k) x = nd(rng);
            for (auto& x : v) x = nd(rng);
            cache.store(1, slot, k.data(), v.data());
            const std::vector<float> back = decode(cache, 1, slot, true);
            for (size_t i = 0; i < k.size(); ++i) {
                const float tol = t == GgmlType::F32 ? 0.0f : t == GgmlType::F16 ? 1e-3f : 3e-2f;
                ASSERT_NEAR(back[i], k[i], tol * (1.0f + std::fabs(k[i]))) << kv_type_name(t);
            }
        }
        // A whole block, a lower half into an upper one and the reverse: the
        // keys change lanes, the bytes do not.
        cache.copy_slots(0, 2 * 4, 4);
        cache.copy_slots(0, 3 * 4 + 2, 2);
        cache.copy_slots(2, 1 * 4, 2);
        const std::pair<int64_t, int64_t> copies[] = {{0, 8}, {1, 9}, {2, 10}, {3, 11}, {0, 14}, {1, 15}, {2, 4}, {3, 5}};
        for (int layer = 0; layer < 2; ++layer) {
            for (auto [from, to] : copies) {
                EXPECT_EQ(decode(cache, layer, from, true), decode(cache, layer, to, true)) << kv_type_name(t);
                EXPECT_EQ(decode(cache, layer, from, false), decode(cache, layer, to, false)) << kv_type_name(t);
            }
        }
    }
}

// Layers whose K blocks and V rows are multiples of 64 bytes start on a
// cache line, so no 64-byte load of the attention kernels straddles two
// (depth-4k decode of the random 135M Q4_0 read 3-10% faster once they did).
TEST(KvCacheTest, LayerPoolsStartOnCacheLines) {
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
        const KvCache cache(3, 3, 64, 5, 16, {t, t});
        for (int layer = 0; layer < 3; ++layer) {
            const PagedKv kv = cache.view(layer);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(kv.k_pool) % 64, 0u) << kv_type_name(t) << layer;
            EXPECT_EQ(reinterpret_cast<uintptr_t>(kv.v_pool) % 64, 0u) << kv_type_name(t) << layer;
        }
    }
}

TEST(KvCacheTest, BytesPerBlockFollowTheTypes) {
    const int64_t f32 = KvCache::bytes_per_block(30, 192, 16, {GgmlType::F32, GgmlType::F32});
    EXPECT_EQ(f32, 30 * 16 * 192 * 4 * 2);
    EXPECT_EQ(KvCache::bytes_per_block(30, 192, 16, {GgmlType::F16, GgmlType::F16}) * 2, f32);
    EXPECT_EQ(KvCache::bytes_per_block(30, 192, 16, {GgmlType::BF16, GgmlType::F32}), f32 * 3 / 4);
    EXPECT_EQ(KvCache::bytes_per_block(30, 192, 16, {GgmlType::Q8_0, GgmlType::Q8_0}), 30 * 16 * 6 * 34 * 2);
}

TEST(KvCacheTest, TypeNamesAndChecks) {
    for (GgmlType t : kTypes) EXPECT_EQ(parse_kv_type(kv_type_name(t)), t);
    EXPECT_EQ(parse_kv_type("F16"), GgmlType::F16);
    EXPECT_EQ(parse_kv_type("q4_0"), std::nullopt);
    EXPECT_EQ(parse_kv_type(""), std::nullopt);
    EXPECT_TRUE(check_kv_types({GgmlType::Q8_0, GgmlType::F16}, 64).ok());
    EXPECT_FALSE(check_kv_types({GgmlType::Q8_0, GgmlType::F16}, 80).ok());
    EXPECT_TRUE(check_kv_types({GgmlType::BF16, GgmlType::F16}, 80).ok());
    EXPECT_FALSE(check_kv_types({GgmlType::Q4_0, GgmlType::F16}, 64).ok());
}

}  // namespace
}  // namespace tessera
