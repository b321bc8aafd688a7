// Hand-built scenarios for cache/prefix_cache.h: whole-block matching, duplicates,
// salt isolation, hash collisions, LRU eviction and reference balance (the
// randomized model check lives in cache_prefix_model_test.cpp); with a window
// pool, a match ends only where the window before it is all held.
#include "cache/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace tessera {
namespace {

constexpr int32_t kBlock = 4;
using Tokens = std::vector<int32_t>;
using Blocks = std::vector<int32_t>;

Tokens iota_tokens(int32_t first, int32_t n) {
    Tokens t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), first);
    return t;
}

Tokens concat(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

uint64_t constant_hash(std::span<const int32_t>) { return 42; }

class PrefixCacheTest : public ::testing::Test {
protected:
    Blocks allocate(int n) {
        Blocks out;
        for (int i = 0; i < n; ++i) {
            const int32_t b = pool.allocate();
            EXPECT_GE(b, 0);
            out.push_back(b);
        }
        return out;
    }
    void release(const Blocks& blocks) {
        for (int32_t b : blocks) pool.unref(b);
    }
    // A sequence that computed `tokens` (whole blocks) and handed them to the
    // cache before finishing: afterwards the cache is the only holder.
    Blocks compute_and_cache(const Tokens& tokens, uint64_t salt = 0) {
        const Blocks blocks = allocate(static_cast<int>(tokens.size()) / kBlock);
        cache.insert(tokens, blocks, salt);
        release(blocks);
        return blocks;
    }
    // match() and drop the references at once; returns the matched blocks.
    Blocks peek(const Tokens& tokens, uint64_t salt = 0) {
        const PrefixCache::Match m = cache.match(tokens, salt);
        EXPECT_EQ(m.n_tokens, static_cast<int64_t>(m.blocks.size()) * kBlock);
        release(m.blocks);
        return m.blocks;
    }
    void expect_all_free_after_clear() {
        cache.clear();
        EXPECT_EQ(cache.n_nodes(), 0);
        EXPECT_EQ(pool.n_free(), pool.n_blocks());
    }

    BlockPool pool{32};
    PrefixCache cache{pool, kBlock};
};

TEST_F(PrefixCacheTest, EmptyCacheMatchesNothing) {
    const PrefixCache::Match m = cache.match(iota_tokens(0, 12), 0);
    EXPECT_TRUE(m.blocks.empty());
    EXPECT_EQ(m.n_tokens, 0);
    EXPECT_EQ(cache.n_nodes(), 0);
    EXPECT_EQ(cache.evictable_blocks(), 0);
    EXPECT_EQ(cache.evict(5), 0);
    EXPECT_EQ(pool.n_free(), pool.n_blocks());
}

TEST_F(PrefixCacheTest, MatchReturnsOnlyWholeMatchingBlocks) {
    const Tokens a = iota_tokens(100, 12);
    const Blocks cached = compute_and_cache(a);
    EXPECT_EQ(cache.n_nodes(), 3);

    const PrefixCache::Match exact = cache.match(a, 0);
    EXPECT_EQ(exact.blocks, cached);
    EXPECT_EQ(exact.n_tokens, 12);
    for (int32_t b : cached) EXPECT_EQ(pool.ref_count(b), 2);  // cache + caller
    release(exact.blocks);

    EXPECT_EQ(peek(concat(a, iota_tokens(7, 5))), cached);  // longer
    EXPECT_EQ(peek(iota_tokens(100, 9)), Blocks(cached.begin(), cached.begin() + 2));
    Tokens middle = a;
    middle[6] = -5;  // diverges inside the second block
    EXPECT_EQ(peek(middle), Blocks{cached[0]});
    Tokens first = a;
    first[0] = -5;
    EXPECT_TRUE(peek(first).empty());
    expect_all_free_after_clear();
}

TEST_F(PrefixCacheTest, PartialLastBlockIsNeverMatched) {
    compute_and_cache(iota_tokens(0, 8));
    EXPECT_TRUE(peek(iota_tokens(0, 3)).empty());
    EXPECT_EQ(peek(iota_tokens(0, 7)).size(), 1u);
    EXPECT_EQ(peek(iota_tokens(0, 8)).size(), 2u);
    expect_all_free_after_clear();
}

TEST_F(PrefixCacheTest, DuplicateInsertKeepsTheExistingBlock) {
    const Tokens a = iota_tokens(0, 8);
    const Blocks first = compute_and_cache(a);
    // A second sequence computed the same prefix plus one more block before
    // seeing the first one's entry.
    const Blocks second = allocate(3);
    cache.insert(concat(a, iota_tokens(50, 4)), second, 0);
    EXPECT_EQ(cache.n_nodes(), 3);
    EXPECT_EQ(pool.ref_count(second[0]), 1);  // duplicates stay the caller's alone
    EXPECT_EQ(pool.ref_count(second[1]), 1);
    EXPECT_EQ(pool.ref_count(second[2]), 2);  // the new run was stored
    release(second);
    EXPECT_EQ(pool.ref_count(second[0]), 0);
    EXPECT_EQ(peek(concat(a, iota_tokens(50, 4))), (Blocks{first[0], first[1], second[2]}));
    expect_all_free_after_clear();
}

TEST_F(PrefixCacheTest, InsertingMatchedBlocksBackTakesNoExtraReference) {
    const Tokens a = iota_tokens(0, 8);
    compute_and_cache(a);
    PrefixCache::Match m = cache.match(a, 0);
    const Blocks fresh = allocate(1);
    Blocks table = m.blocks;
    table.push_back(fresh[0]);
    cache.insert(concat(a, iota_tokens(9, 4)), table, 0);
    EXPECT_EQ(pool.ref_count(table[0]), 2);
    EXPECT_EQ(pool.ref_count(table[1]), 2);
    EXPECT_EQ(pool.ref_count(table[2]), 2);
    release(table);
    EXPECT_EQ(cache.n_nodes(), 3);
    expect_all_free_after_clear();
}

TEST_F(PrefixCacheTest, DifferentSaltsNeverShare) {
    const Tokens a = iota_tokens(0, 8);
    const Blocks user1 = compute_and_cache(a, /*salt=*/1);
    EXPECT_TRUE(peek(a, 2).empty());
    EXPECT_EQ(peek(a, 1), user1);
    const Blocks user2 = compute_and_cache(a, /*salt=*/2);
    EXPECT_EQ(cache.n_nodes(), 4);
    EXPECT_EQ(peek(a, 2), user2);
    EXPECT_EQ(peek(a, 1), user1);
    EXPECT_TRUE(peek(a, 0).empty());
    expect_all_free_after_clear();
}

TEST(PrefixCacheCollisionTest, CollidingHashesNeverSwapContent) {
    BlockPool pool(32);
    PrefixCache cache(pool, kBlock, constant_hash);  // every run collides
    std::vector<std::pair<Tokens, Blocks>> entries;
    for (int32_t first : {0, 10, 20, 30}) {
        for (int32_t second : {100, 200}) {
            const Tokens t = concat(iota_tokens(first, 4), iota_tokens(second, 4));
            PrefixCache::Match m = cache.match(t, 0);
            Blocks table = m.blocks;
            while (table.size() < 2) table.push_back(pool.allocate());
            cache.insert(t, table, 0);
            for (int32_t b : table) pool.unref(b);
            entries.emplace_back(t, table);
        }
    }
    EXPECT_EQ(cache.n_nodes(), 4 + 8);
    for (const auto& [tokens, blocks] : entries) {
        const PrefixCache::Match m = cache.match(tokens, 0);
        EXPECT_EQ(m.blocks, blocks);
        for (int32_t b : m.blocks) pool.unref(b);
    }
    // Same hash, different content: no hit at either level.
    PrefixCache::Match miss = cache.match(concat(iota_tokens(5, 4), iota_tokens(100, 4)), 0);
    EXPECT_TRUE(miss.blocks.empty());
    miss = cache.match(concat(iota_tokens(0, 4), iota_tokens(300, 4)), 0);
    EXPECT_EQ(miss.blocks.size(), 1u);
    pool.unref(miss.blocks[0]);
    cache.clear();
    EXPECT_EQ(pool.n_free(), pool.n_blocks());
}

TEST_F(PrefixCacheTest, EvictsLeastRecentlyUsedLeavesFirst) {
    const Tokens x = iota_tokens(0, 8), y = iota_tokens(100, 8), z = iota_tokens(200, 8);
    const Blocks xb = compute_and_cache(x);
    const Blocks yb = compute_and_cache(y);
    const Blocks zb = compute_and_cache(z);
    peek(x);  // x is now the most recent, y the oldest
    EXPECT_EQ(cache.evictable_blocks(), 6);

    EXPECT_EQ(cache.evict(1), 1);
    EXPECT_EQ(pool.ref_count(yb[1]), 0);  // the leaf goes before its parent
    EXPECT_EQ(pool.ref_count(yb[0]), 1);
    EXPECT_EQ(cache.evict(1), 1);  // the exposed parent is now the oldest leaf
    EXPECT_EQ(pool.ref_count(yb[0]), 0);
    EXPECT_EQ(cache.evict(1), 1);
    EXPECT_EQ(pool.ref_count(zb[1]), 0);
    EXPECT_EQ(pool.ref_count(xb[1]), 1);
    EXPECT_EQ(peek(y).size(), 0u);
    EXPECT_EQ(peek(z).size(), 1u);
    EXPECT_EQ(cache.n_nodes(), 3);
    expect_all_free_after_clear();
}

TEST_F(PrefixCacheTest, ReferencedBlocksAndTheirAncestorsStay) {
    const Tokens shared = iota_tokens(0, 4);
    const Tokens p = concat(shared, iota_tokens(10, 8));
    const Tokens q = concat(shared, iota_tokens(20, 4));
    const Blocks pb = compute_and_cache(p);
    compute_and_cache(q);
    EXPECT_EQ(cache.n_nodes(), 4);
    const PrefixCache::Match held = cache.match(q, 0);  // a running sequence
    ASSERT_EQ(held.blocks.size(), 2u);
    EXPECT_EQ(held.blocks[0], pb[0]);
    EXPECT_EQ(cache.evictable_blocks(), 2);  // p's own two blocks

    EXPECT_EQ(cache.evict(100), 2);
    EXPECT_EQ(pool.ref_count(pb[2]), 0);
    EXPECT_EQ(pool.ref_count(pb[1]), 0);
    EXPECT_EQ(pool.ref_count(held.blocks[0]), 2);
    EXPECT_EQ(pool.ref_count(held.blocks[1]), 2);
    EXPECT_EQ(cache.evictable_blocks(), 0);
    EXPECT_EQ(cache.evict(100), 0);

    release(held.blocks);  // the sequence finished: the whole chain can go
    EXPECT_EQ(cache.evictable_blocks(), 2);
    EXPECT_EQ(cache.evict(100), 2);
    EXPECT_EQ(cache.n_nodes(), 0);
    EXPECT_EQ(pool.n_free(), pool.n_blocks());
}

TEST_F(PrefixCacheTest, HeldLeafBlocksItsUnheldAncestors) {
    const Tokens a = iota_tokens(0, 12);
    compute_and_cache(a);
    PrefixCache::Match m = cache.match(a, 0);
    pool.unref(m.blocks[0]);  // keep only the last block
    pool.unref(m.blocks[1]);
    EXPECT_EQ(cache.evictable_blocks(), 0);
    EXPECT_EQ(cache.evict(3), 0);
    pool.unref(m.blocks[2]);
    EXPECT_EQ(cache.evict(3), 3);
}

TEST_F(PrefixCacheTest, ClearLeavesCallerReferencesIntact) {
    const Tokens a = iota_tokens(0, 8);
    compute_and_cache(a);
    const PrefixCache::Match m = cache.match(a, 0);
    cache.clear();
    EXPECT_EQ(cache.n_nodes(), 0);
    for (int32_t b : m.blocks) EXPECT_EQ(pool.ref_count(b), 1);
    EXPECT_TRUE(peek(a).empty());
    release(m.blocks);
    EXPECT_EQ(pool.n_free(), pool.n_blocks());
}

TEST(PrefixCacheLifetimeTest, DestructorReturnsTheCachesReferences) {
    BlockPool local(8);
    {
        PrefixCache scoped(local, kBlock);
        const int32_t b = local.allocate();
        scoped.insert(iota_tokens(0, 4), Blocks{b}, 0);
        local.unref(b);
        EXPECT_EQ(local.n_free(), 7);
    }
    EXPECT_EQ(local.n_free(), 8);
}

using PrefixCacheDeathTest = PrefixCacheTest;

TEST_F(PrefixCacheDeathTest, MisuseAborts) {
    const Blocks b = allocate(2);
    EXPECT_DEATH(cache.insert(iota_tokens(0, 7), b, 0), "check failed");
    cache.insert(iota_tokens(0, 4), Blocks{b[0]}, 0);
    EXPECT_DEATH(cache.insert(iota_tokens(50, 4), Blocks{b[0]}, 0), "already cached");
    release(b);
    expect_all_free_after_clear();
}

// A window of 6 positions over blocks of 4: a match ending at run m needs
// the window blocks of runs m - 2 and m - 1 (positions from 4m - 5 on).
class PrefixCacheWindowTest : public ::testing::Test {
protected:
    // Caches 6 runs whose window blocks are present where `has` says.
    void cache_runs(const std::vector<bool>& has) {
        Blocks blocks, window;
        for (bool h : has) {
            blocks.push_back(pool.allocate());
            window.push_back(h ? window_pool.allocate() : -1);
        }
        cache.insert(iota_tokens(0, static_cast<int32_t>(has.size()) * kBlock), blocks, 0, window);
        for (int32_t b : blocks) pool.unref(b);
        for (int32_t b : window) {
            if (b >= 0) window_pool.unref(b);
        }
    }
    int64_t match_and_release(int32_t n_tokens) {
        const PrefixCache::Match m = cache.match(iota_tokens(0, n_tokens), 0);
        EXPECT_EQ(m.window_blocks.size(), m.blocks.size());
        EXPECT_EQ(cache.cached_tokens(iota_tokens(0, n_tokens), 0), m.n_tokens);
        // Only the runs the window reaches are handed over.
        for (size_t i = 0; i < m.window_blocks.size(); ++i) {
            EXPECT_EQ(m.window_blocks[i] >= 0, static_cast<int64_t>(i + 2) >= static_cast<int64_t>(m.blocks.size()))
                << i;
        }
        cache.release(m);
        return m.n_tokens;
    }

    BlockPool pool{32};
    BlockPool window_pool{32};
    PrefixCache cache{pool, kBlock, default_block_hash, WindowPool{&window_pool, 6}};
};

TEST_F(PrefixCacheWindowTest, MatchEndsWhereTheWindowBeforeItIsHeld) {
    cache_runs({false, false, true, true, false, true});
    EXPECT_EQ(match_and_release(24), 16);  // run 4's window block is gone: the match ends after run 3
    EXPECT_EQ(match_and_release(12), 0);   // runs 0 and 1 are gone: nothing before run 4 can end a match
    EXPECT_EQ(window_pool.n_free(), 29);   // the cache holds its three
    EXPECT_EQ(pool.n_free(), 26);
}

TEST_F(PrefixCacheWindowTest, ALaterSequenceFillsMissingWindowBlocks) {
    cache_runs({false, false, true, true, false, false});
    EXPECT_EQ(match_and_release(24), 16);
    cache_runs({true, true, true, true, true, true});  // computed again: the missing ones join
    EXPECT_EQ(match_and_release(24), 24);
    EXPECT_EQ(window_pool.n_free(), 26);  // 6 held: the duplicates of runs 2 and 3 went back
}

TEST_F(PrefixCacheWindowTest, EvictWindowFreesOnlyBlocksTheCacheAloneHolds) {
    cache_runs({true, true, true, true, true, true});
    PrefixCache::Match held = cache.match(iota_tokens(0, 24), 0);  // holds the window blocks of runs 4 and 5
    EXPECT_EQ(cache.evict_window(100), 4);
    EXPECT_EQ(cache.n_nodes(), 6);  // the nodes stay
    EXPECT_EQ(cache.cached_tokens(iota_tokens(0, 24), 0), 24);  // runs 4 and 5 end a match still
    cache.release(held);
    EXPECT_EQ(cache.evict_window(1), 1);
    EXPECT_EQ(cache.cached_tokens(iota_tokens(0, 24), 0), 0);
    cache.clear();
    EXPECT_EQ(window_pool.n_free(), 32);
    EXPECT_EQ(pool.n_free(), 32);
}

}  // namespace
}  // namespace tessera
