// sched/block_tables.h: a sequence growing token by token keeps its last
// run in a half block while it fits and moves it into a whole block when it
// grows, without losing a stored value; forks share runs until one writes
// (copy-on-write); unfilled slots count the tails and the stranded halves;
// running out of blocks fails cleanly and release returns every block.
#include "sched/block_tables.h"

#include "model/kv_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera {
namespace {

constexpr int kBs = 16;

// A one-layer F32 cache of n_blocks blocks of 16 slots, kv_dim 32.
KvCache small_cache(int n_blocks) { return KvCache(1, 1, 32, n_blocks, kBs, KvTypes{GgmlType::F32, GgmlType::F32}); }

// Stores `value` in every element of position pos's K and V.
void store(KvCache& cache, const Sequence& s, int64_t pos, float value) {
    const std::vector<float> row(32, value);
    cache.store(0, s.block_table[static_cast<size_t>(pos / kBs)] + pos % kBs, row.data(), row.data());
}

// The V value stored at position pos (F32 rows).
float stored(const KvCache& cache, const Sequence& s, int64_t pos) {
    const PagedKv kv = cache.view(0);
    const int64_t slot = s.block_table[static_cast<size_t>(pos / kBs)] + pos % kBs;
    return reinterpret_cast<const float*>(kv.v_pool + slot * kv.v_row_bytes)[0];
}

// Runs n tokens of s the way the engine does: ensure, apply the copies,
// store each position, commit.
bool run(BlockTables& t, KvCache& cache, Sequence& s, int64_t n) {
    std::vector<SlotCopy> copies;
    const bool ok = t.ensure(s, s.n_computed + n, copies);
    for (const SlotCopy& c : copies) cache.copy_slots(c.src, c.dst, c.n);
    if (!ok) return false;
    for (int64_t p = s.n_computed; p < s.n_computed + n; ++p) store(cache, s, p, static_cast<float>(p + 1));
    s.n_computed += n;
    return true;
}

TEST(BlockTablesTest, ShortLastRunLivesInAHalfBlockUntilItGrows) {
    KvCache cache = small_cache(8);
    BlockTables tables(cache.blocks(), kBs, [] { return false; });
    Sequence s;
    for (int64_t n = 1; n <= 50; ++n) {
        ASSERT_TRUE(run(tables, cache, s, 1));
        const int64_t tail = (n - 1) % kBs + 1;  // tokens in the last run
        EXPECT_EQ(s.half_tail, tail <= kBs / 2) << n << " tokens";
        EXPECT_EQ(tables.capacity(s), (n - tail) + (tail <= kBs / 2 ? kBs / 2 : kBs)) << n << " tokens";
        for (int64_t p = 0; p < n; ++p) ASSERT_EQ(stored(cache, s, p), static_cast<float>(p + 1)) << p << " of " << n;
    }
    std::list<Sequence*> running{&s};
    // 50 tokens: 3 whole runs and 2 tokens in a half; its mate is stranded.
    EXPECT_EQ(tables.unfilled(running), 6 + 8);
    tables.release(s);
    EXPECT_EQ(cache.blocks().n_free(), 8);
    EXPECT_EQ(cache.blocks().n_stranded_halves(), 0);
}

TEST(BlockTablesTest, TwoShortTailsShareOneBlock) {
    KvCache cache = small_cache(4);
    BlockTables tables(cache.blocks(), kBs, [] { return false; });
    Sequence a, b;
    ASSERT_TRUE(run(tables, cache, a, 20));  // a whole block and a half
    ASSERT_TRUE(run(tables, cache, b, 3));   // the other half
    EXPECT_EQ(a.block_table.back() / kBs, b.block_table.back() / kBs);
    EXPECT_EQ(cache.blocks().n_free(), 2);
    std::list<Sequence*> running{&a, &b};
    EXPECT_EQ(tables.unfilled(running), 4 + 5);
    for (int64_t p = 0; p < 3; ++p) EXPECT_EQ(stored(cache, b, p), static_cast<float>(p + 1));
    for (int64_t p = 0; p < 20; ++p) EXPECT_EQ(stored(cache, a, p), static_cast<float>(p + 1));
}

TEST(BlockTablesTest, ForksCopyASharedRunBeforeWritingIt) {
    for (int64_t prompt : {5, 13, 16, 21}) {  // half tail, whole tail, full last run, whole + half
        KvCache cache = small_cache(8);
        BlockTables tables(cache.blocks(), kBs, [] { return false; });
        Sequence a;
        ASSERT_TRUE(run(tables, cache, a, prompt));
        Sequence b = a;
        tables.share(b);
        ASSERT_TRUE(run(tables, cache, b, 1));
        store(cache, b, prompt, -1.0f);  // b's next token differs from a's
        ASSERT_TRUE(run(tables, cache, a, 1));
        EXPECT_EQ(stored(cache, a, prompt), static_cast<float>(prompt + 1)) << prompt;
        EXPECT_EQ(stored(cache, b, prompt), -1.0f) << prompt;
        for (int64_t p = 0; p < prompt; ++p) {
            EXPECT_EQ(stored(cache, a, p), static_cast<float>(p + 1));
            EXPECT_EQ(stored(cache, b, p), static_cast<float>(p + 1));
        }
        tables.release(a);
        tables.release(b);
        EXPECT_EQ(cache.blocks().n_free(), 8) << prompt;
    }
}

TEST(BlockTablesTest, RunningOutFailsAndTheTableStaysValid) {
    KvCache cache = small_cache(2);
    int evictions = 0;
    BlockTables tables(cache.blocks(), kBs, [&] { return ++evictions, false; });
    Sequence a, b;
    ASSERT_TRUE(run(tables, cache, a, 24));  // one block and a half
    ASSERT_TRUE(run(tables, cache, b, 8));   // the other half
    std::vector<SlotCopy> copies;
    EXPECT_FALSE(tables.ensure(a, 25, copies));      // the half cannot grow: no whole block left
    EXPECT_GT(evictions, 0);
    EXPECT_TRUE(a.half_tail);
    for (int64_t p = 0; p < 24; ++p) EXPECT_EQ(stored(cache, a, p), static_cast<float>(p + 1));
    tables.release(b);
    tables.release(a);
    EXPECT_EQ(cache.blocks().n_free(), 2);
}

}  // namespace
}  // namespace tessera
