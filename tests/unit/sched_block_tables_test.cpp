// sched/block_tables.h: a sequence growing token by token keeps its last
// run in a half block while it fits and moves it into a whole block when it
// grows, without losing a stored value; forks share runs until one writes
// (copy-on-write); unfilled slots count the tails and the stranded halves;
// running out of blocks fails cleanly and release returns every block. With
// a window pool, the sliding-window layers' runs behind the window are freed
// as a sequence advances, forks copy those runs too, and the values a
// window still sees survive.
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
    BlockTables tables(cache.blocks(), kBs, [](bool) { return false; });
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
    BlockTables tables(cache.blocks(), kBs, [](bool) { return false; });
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
        BlockTables tables(cache.blocks(), kBs, [](bool) { return false; });
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
    BlockTables tables(cache.blocks(), kBs, [&](bool) { return ++evictions, false; });
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

// Two layers: layer 0 windowed (its own pool of n_window blocks), layer 1 not.
constexpr int64_t kWindow = 20;
KvCache windowed_cache(int n_blocks, int n_window) {
    return KvCache(2, 1, 32, n_blocks, kBs, KvTypes{GgmlType::F32, GgmlType::F32}, KvWindowPool{{1, 0}, n_window});
}

float stored_at(const KvCache& cache, int layer, int64_t slot) {
    const PagedKv kv = cache.view(layer);
    return reinterpret_cast<const float*>(kv.v_pool + slot * kv.v_row_bytes)[0];
}

// Like run(), for both layers: the window layer gets p + 1, the other -(p + 1);
// then slides as the scheduler does after a step.
bool run_windowed(BlockTables& t, KvCache& cache, Sequence& s, int64_t n) {
    std::vector<SlotCopy> copies;
    const bool ok = t.ensure(s, s.n_computed + n, copies);
    for (const SlotCopy& c : copies) cache.copy_slots(c.src, c.dst, c.n, c.window);
    if (!ok) return false;
    for (int64_t p = s.n_computed; p < s.n_computed + n; ++p) {
        const std::vector<float> w(32, static_cast<float>(p + 1)), g(32, -static_cast<float>(p + 1));
        cache.store(0, s.window_table[static_cast<size_t>(p / kBs)] + p % kBs, w.data(), w.data());
        cache.store(1, s.block_table[static_cast<size_t>(p / kBs)] + p % kBs, g.data(), g.data());
    }
    s.n_computed += n;
    t.slide(s);
    return true;
}

// Every position's global value, and the window's values for a query at n_computed.
void expect_intact(const KvCache& cache, const Sequence& s) {
    ASSERT_EQ(s.window_table.size(), s.block_table.size());
    for (int64_t p = 0; p < s.n_computed; ++p) {
        const size_t run = static_cast<size_t>(p / kBs);
        ASSERT_EQ(stored_at(cache, 1, s.block_table[run] + p % kBs), -static_cast<float>(p + 1)) << p;
        const bool seen = p >= s.n_computed - kWindow + 1;  // by the next query, at n_computed
        if (seen) {
            ASSERT_EQ(stored_at(cache, 0, s.window_table[run] + p % kBs), static_cast<float>(p + 1)) << p;
        }
        // A run wholly behind the window is freed; one the window reaches is held.
        const bool behind = static_cast<int64_t>(run + 1) * kBs <= s.n_computed - kWindow + 1;
        ASSERT_EQ(s.window_table[run] < 0, behind) << "run " << run << " at " << s.n_computed;
    }
}

TEST(BlockTablesTest, WindowRunsBehindTheWindowAreFreedAsTheSequenceAdvances) {
    KvCache cache = windowed_cache(16, 3);  // 3 runs: a 20-token window spans at most 3 runs of 16
    BlockTables tables(cache.blocks(), kBs, [](bool) { return false; }, WindowPool{&cache.window_blocks(), kWindow});
    Sequence s;
    for (int64_t n = 1; n <= 200; ++n) {
        ASSERT_TRUE(run_windowed(tables, cache, s, 1)) << n;
        expect_intact(cache, s);
    }
    EXPECT_LE(cache.window_blocks().n_free(), 2);
    // A 40-token chunk needs its window and the chunk at once: 4 runs.
    Sequence chunked;
    ASSERT_TRUE(run_windowed(tables, cache, chunked, 8));  // one run: the pool is now out
    std::vector<SlotCopy> copies;
    EXPECT_FALSE(tables.ensure(chunked, 48, copies));
    tables.release(chunked);
    tables.release(s);
    EXPECT_EQ(cache.blocks().n_free(), 16);
    EXPECT_EQ(cache.window_blocks().n_free(), 3);
}

TEST(BlockTablesTest, ForksCopyTheirSharedWindowRunAndSlideApart) {
    KvCache cache = windowed_cache(16, 8);
    BlockTables tables(cache.blocks(), kBs, [](bool) { return false; }, WindowPool{&cache.window_blocks(), kWindow});
    Sequence parent;
    ASSERT_TRUE(run_windowed(tables, cache, parent, 40));
    Sequence child = parent;
    tables.share(child);
    for (int step = 0; step < 30; ++step) {
        ASSERT_TRUE(run_windowed(tables, cache, parent, 1));
        ASSERT_TRUE(run_windowed(tables, cache, child, 1));
        expect_intact(cache, parent);
        expect_intact(cache, child);
    }
    EXPECT_NE(parent.window_table.back(), child.window_table.back());
    tables.truncate(child, 50);  // rejected draft positions past 50 go, window runs included
    EXPECT_EQ(child.window_table.size(), 4u);
    tables.release(child);
    tables.release(parent);
    EXPECT_EQ(cache.blocks().n_free(), 16);
    EXPECT_EQ(cache.window_blocks().n_free(), 8);
}

}  // namespace
}  // namespace tessera
