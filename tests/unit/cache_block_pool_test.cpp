// Tests for cache/block_pool.h: allocation order, ref counting, free-list
// reuse, exhaustion, and that misuse (double free, bad ids) aborts.
#include "cache/block_pool.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera {
namespace {

TEST(BlockPoolTest, FreshPoolHandsOutEveryBlockOnceThenRunsOut) {
    BlockPool pool(4);
    EXPECT_EQ(pool.n_blocks(), 4);
    EXPECT_EQ(pool.n_free(), 4);
    std::set<int32_t> seen;
    for (int i = 0; i < 4; ++i) {
        const int32_t b = pool.allocate();
        ASSERT_GE(b, 0);
        ASSERT_LT(b, 4);
        EXPECT_TRUE(seen.insert(b).second) << "block " << b << " handed out twice";
        EXPECT_EQ(pool.ref_count(b), 1);
    }
    EXPECT_EQ(pool.n_free(), 0);
    EXPECT_EQ(pool.allocate(), -1);
}

TEST(BlockPoolTest, EmptyPoolHasNothingToGive) {
    BlockPool pool(0);
    EXPECT_EQ(pool.n_blocks(), 0);
    EXPECT_EQ(pool.allocate(), -1);
}

TEST(BlockPoolTest, BlockIsFreedOnlyWhenLastHolderLeaves) {
    BlockPool pool(2);
    const int32_t b = pool.allocate();
    pool.ref(b);
    pool.ref(b);
    EXPECT_EQ(pool.ref_count(b), 3);
    EXPECT_EQ(pool.n_free(), 1);
    pool.unref(b);
    pool.unref(b);
    EXPECT_EQ(pool.ref_count(b), 1);
    EXPECT_EQ(pool.n_free(), 1);
    pool.unref(b);
    EXPECT_EQ(pool.ref_count(b), 0);
    EXPECT_EQ(pool.n_free(), 2);
}

TEST(BlockPoolTest, FreedBlockIsReusedFirst) {
    BlockPool pool(8);
    const int32_t a = pool.allocate();
    const int32_t b = pool.allocate();
    const int32_t c = pool.allocate();
    pool.unref(b);
    EXPECT_EQ(pool.allocate(), b);
    pool.unref(a);
    pool.unref(c);
    EXPECT_EQ(pool.allocate(), c);
    EXPECT_EQ(pool.allocate(), a);
    EXPECT_EQ(pool.n_free(), 5);
}

TEST(BlockPoolTest, ExhaustThenReleaseAllRestoresThePool) {
    BlockPool pool(16);
    std::vector<int32_t> held;
    for (int32_t b = pool.allocate(); b >= 0; b = pool.allocate()) held.push_back(b);
    EXPECT_EQ(held.size(), 16u);
    for (int32_t b : held) pool.unref(b);
    EXPECT_EQ(pool.n_free(), pool.n_blocks());
    for (int32_t b : held) EXPECT_EQ(pool.ref_count(b), 0);
}

TEST(BlockPoolDeathTest, DoubleFreeAborts) {
    BlockPool pool(2);
    const int32_t b = pool.allocate();
    pool.unref(b);
    EXPECT_DEATH(pool.unref(b), "double free");
}

TEST(BlockPoolDeathTest, RefOfFreeBlockAborts) {
    BlockPool pool(2);
    EXPECT_DEATH(pool.ref(1), "ref of a free block");
}

TEST(BlockPoolDeathTest, OutOfRangeIdsAbort) {
    BlockPool pool(2);
    EXPECT_DEATH(pool.ref(2), "out of range");
    EXPECT_DEATH(pool.unref(-1), "out of range");
    EXPECT_DEATH((void)pool.ref_count(7), "out of range");
}

}  // namespace
}  // namespace tessera
