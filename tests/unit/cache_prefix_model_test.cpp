// Randomized model check of cache/prefix_cache.h: thousands of random steps
// (sequences start with a match, fork, finish with an insert or abort,
// evictions, clears) against a plain map from (salt, whole-block prefix) to block with
// the same LRU rule, checking matches, evictions and every ref count.
#include "cache/prefix_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace tessera {
namespace {

constexpr int32_t kBlock = 2;
constexpr int32_t kPoolBlocks = 40;
constexpr int32_t kMaxTokens = 13;  // up to 6 whole blocks and a partial one
constexpr size_t kMaxRunning = 6;
using Tokens = std::vector<int32_t>;
using Blocks = std::vector<int32_t>;

// The reference: every cached prefix spelled out in full.
class Model {
public:
    Blocks match(uint64_t salt, const Tokens& tokens) {
        ++tick_;
        Blocks out;
        for (size_t k = 1; k * kBlock <= tokens.size(); ++k) {
            auto it = entries_.find({salt, prefix(tokens, k)});
            if (it == entries_.end()) break;
            it->second.last_access = tick_;
            out.push_back(it->second.block);
        }
        return out;
    }
    void insert(uint64_t salt, const Tokens& tokens, const Blocks& blocks) {
        ++tick_;
        for (size_t k = 1; k <= blocks.size(); ++k) {
            auto [it, added] = entries_.try_emplace({salt, prefix(tokens, k)},
                                                    Entry{blocks[k - 1], tick_});
            if (!added) it->second.last_access = tick_;
        }
    }
    // Oldest leaf nobody else holds, one at a time, like the cache promises.
    int32_t evict(int32_t n, const std::vector<int32_t>& held) {
        int32_t freed = 0;
        for (; freed < n; ++freed) {
            auto victim = entries_.end();
            for (auto it = entries_.begin(); it != entries_.end(); ++it) {
                if (held[static_cast<size_t>(it->second.block)] > 0 || !is_leaf(it)) continue;
                if (victim == entries_.end() ||
                    it->second.last_access < victim->second.last_access) {
                    victim = it;
                }
            }
            if (victim == entries_.end()) break;
            entries_.erase(victim);
        }
        return freed;
    }
    // Entries whose block and every descendant's block only the cache holds.
    int32_t evictable(const std::vector<int32_t>& held) const {
        int32_t count = 0;
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            bool clean = true;
            for (auto d = it; d != entries_.end() && extends(d->first, it->first); ++d) {
                clean = clean && held[static_cast<size_t>(d->second.block)] == 0;
            }
            count += clean ? 1 : 0;
        }
        return count;
    }
    std::multiset<int32_t> blocks() const {
        std::multiset<int32_t> out;
        for (const auto& [key, e] : entries_) out.insert(e.block);
        return out;
    }
    size_t size() const { return entries_.size(); }
    void clear() { entries_.clear(); }

private:
    struct Entry {
        int32_t block;
        uint64_t last_access;
    };
    using Key = std::pair<uint64_t, Tokens>;
    using Map = std::map<Key, Entry>;

    static Tokens prefix(const Tokens& t, size_t n_blocks) {
        return Tokens(t.begin(), t.begin() + static_cast<ptrdiff_t>(n_blocks * kBlock));
    }
    static bool extends(const Key& longer, const Key& shorter) {
        return longer.first == shorter.first && longer.second.size() >= shorter.second.size() &&
               std::equal(shorter.second.begin(), shorter.second.end(), longer.second.begin());
    }
    // In lexicographic order a prefix's extensions follow it directly.
    bool is_leaf(Map::const_iterator it) const {
        const auto next = std::next(it);
        return next == entries_.end() || !extends(next->first, it->first);
    }

    Map entries_;
    uint64_t tick_ = 0;
};

struct Sequence {
    uint64_t salt;
    Tokens tokens;  // whole blocks only: blocks.size() * kBlock tokens
    Blocks blocks;  // one reference each, held by this sequence
};

class ModelCheck {
public:
    ModelCheck(BlockHashFn hash, uint32_t seed) : cache_(pool_, kBlock, hash), rng_(seed) {}

    void run(int steps) {
        for (int i = 0; i < steps && !::testing::Test::HasFailure(); ++i) {
            step();
            check_invariants();
        }
        while (!running_.empty()) finish(0, false);
        cache_.clear();
        EXPECT_EQ(pool_.n_free(), pool_.n_blocks());
    }
    int64_t hits() const { return hits_; }
    int64_t evicted() const { return evicted_; }

private:
    uint32_t roll(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

    void step() {
        const uint32_t r = roll(1000);
        if (r < 450) {
            start();
        } else if (r < 850 && !running_.empty()) {
            finish(roll(static_cast<uint32_t>(running_.size())), /*insert=*/r < 770);
        } else if (r < 960) {
            evict(static_cast<int32_t>(roll(4)));
        } else if (r < 997 && !running_.empty()) {
            fork(roll(static_cast<uint32_t>(running_.size())));
        } else {
            cache_.clear();
            model_.clear();
        }
    }

    void start() {
        Sequence seq{roll(2), Tokens(roll(kMaxTokens + 1)), {}};
        for (int32_t& t : seq.tokens) t = static_cast<int32_t>(roll(2));
        const PrefixCache::Match m = cache_.match(seq.tokens, seq.salt);
        const Blocks expected = model_.match(seq.salt, seq.tokens);
        ASSERT_EQ(m.blocks, expected);
        ASSERT_EQ(m.n_tokens, static_cast<int64_t>(expected.size()) * kBlock);
        hits_ += static_cast<int64_t>(m.blocks.size());
        seq.blocks = m.blocks;
        for (size_t i = m.blocks.size(); i < seq.tokens.size() / kBlock; ++i) {
            int32_t b = pool_.allocate();
            if (b < 0 && evict(1) == 1) b = pool_.allocate();
            if (b < 0) break;  // out of blocks: the sequence gets shorter
            seq.blocks.push_back(b);
        }
        for (int32_t b : seq.blocks) ++held_[static_cast<size_t>(b)];
        seq.tokens.resize(seq.blocks.size() * kBlock);
        running_.push_back(std::move(seq));
        if (running_.size() > kMaxRunning) finish(0, true);
    }

    // A parallel choice: a second holder of every block of a running sequence
    // (pool refs the cache does not see, only hears of).
    void fork(size_t index) {
        const Sequence copy = running_[index];
        for (int32_t b : copy.blocks) {
            pool_.ref(b);
            ++held_[static_cast<size_t>(b)];
        }
        running_.push_back(copy);
        if (running_.size() > kMaxRunning) finish(0, true);
    }

    void finish(size_t index, bool insert) {
        const Sequence seq = running_[index];
        running_.erase(running_.begin() + static_cast<ptrdiff_t>(index));
        if (insert) {
            cache_.insert(seq.tokens, seq.blocks, seq.salt);
            model_.insert(seq.salt, seq.tokens, seq.blocks);
        }
        for (int32_t b : seq.blocks) {
            --held_[static_cast<size_t>(b)];
            pool_.unref(b);
        }
    }

    int32_t evict(int32_t n) {
        const int32_t freed = cache_.evict(n);
        EXPECT_EQ(freed, model_.evict(n, held_));
        evicted_ += freed;
        return freed;
    }

    void check_invariants() {
        ASSERT_EQ(cache_.n_nodes(), static_cast<int64_t>(model_.size()));
        const std::multiset<int32_t> cached = model_.blocks();
        int32_t n_free = 0;
        for (int32_t b = 0; b < kPoolBlocks; ++b) {
            const size_t in_cache = cached.count(b);
            ASSERT_LE(in_cache, 1u) << "block " << b << " cached twice";
            const int32_t want = held_[static_cast<size_t>(b)] + static_cast<int32_t>(in_cache);
            ASSERT_EQ(pool_.ref_count(b), want) << "block " << b;
            n_free += want == 0 ? 1 : 0;
        }
        ASSERT_EQ(pool_.n_free(), n_free);
        ASSERT_EQ(cache_.evictable_blocks(), model_.evictable(held_));
    }

    BlockPool pool_{kPoolBlocks};
    PrefixCache cache_;
    Model model_;
    std::mt19937 rng_;
    std::vector<Sequence> running_;
    std::vector<int32_t> held_ = std::vector<int32_t>(kPoolBlocks, 0);  // refs by running_
    int64_t hits_ = 0;
    int64_t evicted_ = 0;
};

uint64_t first_token_hash(std::span<const int32_t> run) { return static_cast<uint64_t>(run[0]); }
uint64_t constant_hash(std::span<const int32_t>) { return 7; }

void run_model_check(BlockHashFn hash, uint32_t seed) {
    ModelCheck check(hash, seed);
    check.run(3000);
    // The workload must actually exercise sharing and eviction.
    EXPECT_GT(check.hits(), 500);
    EXPECT_GT(check.evicted(), 100);
}

TEST(PrefixCacheModelTest, AgreesWithReferenceModel) { run_model_check(default_block_hash, 1); }

TEST(PrefixCacheModelTest, AgreesWithReferenceModelUnderPartialCollisions) {
    run_model_check(first_token_hash, 2);
}

TEST(PrefixCacheModelTest, AgreesWithReferenceModelWhenEveryHashCollides) {
    run_model_check(constant_hash, 3);
}

}  // namespace
}  // namespace tessera
