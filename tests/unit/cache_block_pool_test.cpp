// Tests for cache/block_pool.h: allocation order, ref counting, free-list
// reuse, exhaustion, half blocks (stranded halves first, a split block free
// again with both halves), and that misuse (double free, bad ids, a whole
// block used as halves) aborts.
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

TEST(BlockPoolTest, HalvesFillAStrandedHalfBeforeSplittingAnotherBlock) {
    BlockPool pool(3);
    const int32_t h = pool.allocate_half();
    ASSERT_GE(h, 0);
    EXPECT_EQ(pool.n_free(), 2);  // one block split
    EXPECT_EQ(pool.n_stranded_halves(), 1);
    const int32_t mate = pool.allocate_half();
    EXPECT_EQ(mate, h ^ 1) << "the stranded half goes first";
    EXPECT_EQ(pool.n_stranded_halves(), 0);
    EXPECT_EQ(pool.n_free(), 2);
    const int32_t other = pool.allocate_half();
    EXPECT_NE(other / 2, h / 2);
    EXPECT_EQ(pool.n_free(), 1);
    // Whole blocks are untouched by halves.
    const int32_t whole = pool.allocate();
    ASSERT_GE(whole, 0);
    EXPECT_NE(whole, h / 2);
    EXPECT_NE(whole, other / 2);
    EXPECT_EQ(pool.allocate(), -1);
    EXPECT_GE(pool.allocate_half(), 0);  // other's mate
    EXPECT_EQ(pool.allocate_half(), -1);
}

TEST(BlockPoolTest, SplitBlockIsFreeOnlyWhenBothHalvesAre) {
    BlockPool pool(1);
    const int32_t a = pool.allocate_half(), b = pool.allocate_half();
    pool.ref_half(a);
    EXPECT_EQ(pool.half_ref_count(a), 2);
    pool.unref_half(a);
    EXPECT_EQ(pool.half_ref_count(a), 1);
    pool.unref_half(b);
    EXPECT_EQ(pool.n_free(), 0);
    EXPECT_EQ(pool.n_stranded_halves(), 1);
    EXPECT_EQ(pool.allocate(), -1);
    pool.unref_half(a);
    EXPECT_EQ(pool.n_free(), 1);
    EXPECT_EQ(pool.n_stranded_halves(), 0);
    const int32_t whole = pool.allocate();
    EXPECT_EQ(whole, a / 2);
    EXPECT_EQ(pool.ref_count(whole), 1);
}

TEST(BlockPoolTest, ManyHalvesReturnTheWholePool) {
    BlockPool pool(5);
    std::vector<int32_t> held;
    for (int32_t h = pool.allocate_half(); h >= 0; h = pool.allocate_half()) held.push_back(h);
    EXPECT_EQ(held.size(), 10u);
    EXPECT_EQ(std::set<int32_t>(held.begin(), held.end()).size(), 10u);
    // Free every other half, then the rest in reverse.
    for (size_t i = 0; i < held.size(); i += 2) pool.unref_half(held[i]);
    EXPECT_EQ(pool.n_stranded_halves(), 5);
    EXPECT_EQ(pool.n_free(), 0);
    for (size_t i = held.size() - 1; i < held.size(); i -= 2) pool.unref_half(held[i]);
    EXPECT_EQ(pool.n_stranded_halves(), 0);
    EXPECT_EQ(pool.n_free(), 5);
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
    EXPECT_DEATH(pool.unref_half(-1), "out of range");
    EXPECT_DEATH(pool.ref_half(4), "out of range");
}

TEST(BlockPoolDeathTest, WholeBlocksAndHalvesDoNotMix) {
    BlockPool pool(2);
    const int32_t b = pool.allocate();
    const int32_t h = pool.allocate_half();
    EXPECT_DEATH(pool.unref_half(2 * b), "free half");
    EXPECT_DEATH(pool.unref(h / 2), "free block");
    EXPECT_DEATH((void)pool.ref_count(h / 2), "split block");
    pool.unref_half(h);
    EXPECT_DEATH(pool.unref_half(h), "double free");
}

}  // namespace
}  // namespace tessera
