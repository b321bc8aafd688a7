// cache/prefix_pins.h: a pin holds its blocks past any eviction until its
// deadline, a repeated pin extends instead of stacking references, the cap
// refuses pins that would hold too much, and every reference comes back.
#include "cache/prefix_pins.h"

#include <gtest/gtest.h>

#include <vector>

#include "cache/prefix_cache.h"

namespace tessera {
namespace {

using Clock = PrefixPins::Clock;
constexpr int32_t kBlock = 4;

std::vector<int32_t> tokens(int32_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = 100 + i;
    return t;
}

// Stores `n_blocks` blocks of tokens(n_blocks * kBlock) in the cache, which
// then holds the only reference on each.
std::vector<int32_t> cache_prefix(BlockPool& pool, PrefixCache& cache, int32_t n_blocks) {
    std::vector<int32_t> blocks;
    for (int32_t i = 0; i < n_blocks; ++i) blocks.push_back(pool.allocate());
    cache.insert(tokens(n_blocks * kBlock), blocks, 0);
    for (int32_t b : blocks) pool.unref(b);
    return blocks;
}

TEST(PrefixPins, PinnedBlocksSurviveEvictionUntilTheDeadline) {
    BlockPool pool(8);
    PrefixCache cache(pool, kBlock);
    PrefixPins pins(cache, 8);
    cache_prefix(pool, cache, 3);
    const Clock::time_point t0 = Clock::now();
    auto m = cache.match(tokens(3 * kBlock), 0);
    ASSERT_EQ(m.n_tokens, 3 * kBlock);
    ASSERT_TRUE(pins.pin(std::move(m), t0 + std::chrono::seconds(10)));
    EXPECT_EQ(pins.n_blocks(), 3);
    EXPECT_EQ(cache.evict(8), 0);  // held: nothing evictable
    EXPECT_EQ(cache.cached_tokens(tokens(3 * kBlock), 0), 3 * kBlock);
    pins.expire(t0 + std::chrono::seconds(9));
    EXPECT_EQ(pins.n_pins(), 1u);
    pins.expire(t0 + std::chrono::seconds(10));
    EXPECT_EQ(pins.n_pins(), 0u);
    EXPECT_EQ(pins.n_blocks(), 0);
    EXPECT_EQ(cache.evict(8), 3);  // the cache's own references were all that was left
    EXPECT_EQ(pool.n_free(), 8);
}

TEST(PrefixPins, RepinningExtendsTheDeadlineWithoutStackingReferences) {
    BlockPool pool(8);
    PrefixCache cache(pool, kBlock);
    PrefixPins pins(cache, 8);
    const std::vector<int32_t> blocks = cache_prefix(pool, cache, 2);
    const Clock::time_point t0 = Clock::now();
    ASSERT_TRUE(pins.pin(cache.match(tokens(2 * kBlock), 0), t0 + std::chrono::seconds(5)));
    ASSERT_TRUE(pins.pin(cache.match(tokens(2 * kBlock), 0), t0 + std::chrono::seconds(20)));
    ASSERT_TRUE(pins.pin(cache.match(tokens(2 * kBlock), 0), t0 + std::chrono::seconds(1)));  // earlier: kept later one
    EXPECT_EQ(pins.n_pins(), 1u);
    EXPECT_EQ(pins.n_blocks(), 2);
    for (int32_t b : blocks) EXPECT_EQ(pool.ref_count(b), 2);  // the cache's and one pin's
    pins.expire(t0 + std::chrono::seconds(19));
    EXPECT_EQ(pins.n_pins(), 1u);
    pins.expire(t0 + std::chrono::seconds(20));
    for (int32_t b : blocks) EXPECT_EQ(pool.ref_count(b), 1);
}

TEST(PrefixPins, APinPastTheCapIsRefusedAndItsReferencesDropped) {
    BlockPool pool(8);
    PrefixCache cache(pool, kBlock);
    PrefixPins pins(cache, 3);
    const std::vector<int32_t> blocks = cache_prefix(pool, cache, 4);
    const Clock::time_point later = Clock::now() + std::chrono::seconds(60);
    EXPECT_FALSE(pins.pin(cache.match(tokens(4 * kBlock), 0), later));
    EXPECT_EQ(pins.n_blocks(), 0);
    for (int32_t b : blocks) EXPECT_EQ(pool.ref_count(b), 1);
    EXPECT_TRUE(pins.pin(cache.match(tokens(2 * kBlock), 0), later));  // a shorter prefix fits
    EXPECT_FALSE(pins.pin(cache.match(tokens(3 * kBlock), 0), later));  // 2 + 3 > 3
    EXPECT_EQ(pins.n_blocks(), 2);
}

TEST(PrefixPins, DestructionReturnsEveryReference) {
    BlockPool pool(8);
    std::vector<int32_t> blocks;
    {
        PrefixCache cache(pool, kBlock);
        blocks = cache_prefix(pool, cache, 3);
        PrefixPins pins(cache, 8);
        ASSERT_TRUE(pins.pin(cache.match(tokens(3 * kBlock), 0), Clock::now() + std::chrono::hours(1)));
        ASSERT_TRUE(pins.pin(cache.match(tokens(1 * kBlock), 0), Clock::now() + std::chrono::hours(1)));
        EXPECT_EQ(pool.ref_count(blocks[0]), 3);
    }
    EXPECT_EQ(pool.n_free(), 8);
}

}  // namespace
}  // namespace tessera
