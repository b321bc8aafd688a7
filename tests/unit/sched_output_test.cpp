// ScheduleOutput as plain data, without a model or K/V storage (a bare
// BlockPool): forks show up as copy-on-write copies, a growing half block as
// a widening copy, prefix hits as shorter runs, preemption as a sequence back
// in the waiting queue holding nothing; the prefix cache's incremental
// evictable count always equals what eviction can actually free.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <vector>

#include "sched_harness.h"

namespace tessera {
namespace {

SchedulerOptions options(int32_t budget = 512, bool prefix_cache = true) {
    return SchedulerOptions{.max_batch_tokens = budget, .max_seqs = 64, .prefix_cache = prefix_cache, .prefill_share = 0};
}

const ScheduledRun* run_of(const ScheduleOutput& out, const Sequence& seq) {
    for (const ScheduledRun& r : out.runs) {
        if (r.seq == &seq) return &r;
    }
    return nullptr;
}

TEST(SchedOutputTest, ForkedChoicesCopyTheSharedPartialRunBeforeWritingIt) {
    Harness h(16, options());
    Sequence& a = h.submit(prefix_then(0, 21, 1), 4);  // one whole run and 5 tokens in a half
    ScheduleOutput out = h.step();
    ASSERT_NE(run_of(out, a), nullptr);
    EXPECT_TRUE(out.copies.empty());  // a prompt's own blocks need no copy
    Sequence& b = h.fork(a);
    EXPECT_EQ(b.block_table, a.block_table);
    EXPECT_EQ(b.status, SeqStatus::Running);
    const int32_t shared_tail = a.block_table[1];
    b.tokens.back() = 8;  // b sampled another token than a

    out = h.step();
    ASSERT_NE(run_of(out, a), nullptr);
    ASSERT_NE(run_of(out, b), nullptr);
    // a runs first and copies the 5 computed slots of the shared half; b
    // keeps the original, now its own. The whole first run stays shared.
    ASSERT_EQ(out.copies.size(), 1u);
    EXPECT_EQ(out.copies[0].src, shared_tail);
    EXPECT_EQ(out.copies[0].dst, a.block_table[1]);
    EXPECT_EQ(out.copies[0].n, 5);
    EXPECT_NE(a.block_table[1], shared_tail);
    EXPECT_EQ(b.block_table[1], shared_tail);
    EXPECT_EQ(a.block_table[0], b.block_table[0]);

    out = h.step();
    EXPECT_TRUE(out.copies.empty());  // nothing is shared any more
    ASSERT_TRUE(h.drain(20));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedOutputTest, AHalfBlockThatMustGrowIsCopiedIntoAWholeOne) {
    Harness h(4, options());
    Sequence& s = h.submit(prefix_then(0, 8, 1), 4);  // exactly half a block
    h.step();
    ASSERT_TRUE(s.half_tail);
    const int32_t half = s.block_table[0];
    const ScheduleOutput out = h.step();  // the 9th position needs a whole block
    EXPECT_FALSE(s.half_tail);
    ASSERT_EQ(out.copies.size(), 1u);
    EXPECT_EQ(out.copies[0].src, half);
    EXPECT_EQ(out.copies[0].dst, s.block_table[0]);
    EXPECT_EQ(out.copies[0].dst % kBlock, 0);
    EXPECT_EQ(out.copies[0].n, 8);
    ASSERT_TRUE(h.drain(20));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedOutputTest, APrefixHitShortensTheFirstRun) {
    Harness h(16, options());
    h.submit(prefix_then(40, 0, 0), 1);
    ASSERT_TRUE(h.drain(10));
    Sequence& b = h.submit(prefix_then(40, 0, 0), 1);
    const ScheduleOutput out = h.step();
    const ScheduledRun* r = run_of(out, b);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(b.n_cached, 32);  // two whole blocks; the last token must run for logits
    EXPECT_EQ(r->n_tokens, 8);
    EXPECT_TRUE(r->logits);
    EXPECT_TRUE(out.copies.empty());
    EXPECT_EQ(h.sched().prefix_hit_tokens(), 32u);
}

TEST(SchedOutputTest, PreemptionPutsTheNewestBackWaitingWithNothingHeld) {
    Harness h(4, options(512, /*prefix_cache=*/false));
    Sequence& a = h.submit(prefix_then(0, 30, 1), 10);  // two whole blocks each: the pool is full
    Sequence& b = h.submit(prefix_then(0, 30, 2), 10);
    for (int i = 0; i < 3; ++i) h.step();  // positions 0..31 computed: still two blocks each
    ASSERT_EQ(a.n_computed, 32);
    ASSERT_EQ(h.pool().n_free(), 0);
    const ScheduleOutput out = h.step();  // a's 33rd position needs a third block
    EXPECT_EQ(out.n_preempted, 1);
    EXPECT_NE(run_of(out, a), nullptr);
    EXPECT_EQ(run_of(out, b), nullptr);
    EXPECT_EQ(b.status, SeqStatus::Waiting);
    EXPECT_TRUE(b.block_table.empty());
    EXPECT_EQ(b.n_computed, 0);
    EXPECT_EQ(h.sched().front_waiting(), &b);
    ASSERT_TRUE(h.drain(100));
    EXPECT_TRUE(h.blocks_all_back());
}

// Random workloads with forks, cancellations and memory pressure: at random
// steps the O(1) evictable count must equal the blocks evict() then frees.
TEST(SchedOutputTest, EvictableCountMatchesWhatEvictionFrees) {
    std::mt19937 rng(25);
    int64_t checked = 0, nonzero = 0;
    for (int round = 0; round < 30; ++round) {
        Harness h(24 + static_cast<int>(rng() % 40), options(32 + static_cast<int32_t>(rng() % 96)));
        std::vector<Sequence*> live;
        for (int step = 0; step < 120; ++step) {
            const uint32_t r = rng() % 10;
            if (r < 3) {
                live.push_back(&h.submit(prefix_then(static_cast<int32_t>(rng() % 70), static_cast<int32_t>(rng() % 20),
                                                     static_cast<int32_t>(rng() % 3)),
                                         1 + static_cast<int32_t>(rng() % 12), rng() % 2));
            } else if (r == 3 && !live.empty()) {
                Sequence* s = live[rng() % live.size()];
                if (s->status == SeqStatus::Running && s->n_uncomputed() == 1) live.push_back(&h.fork(*s));
            } else if (r == 4 && !live.empty()) {
                Sequence* s = live[rng() % live.size()];
                if (s->status != SeqStatus::Finished) h.finish(*s);  // cancelled or done
            }
            if (!h.sched().idle()) h.step();
            if (rng() % 7 == 0) {
                PrefixCache& cache = h.sched().prefix_cache();
                const int32_t counted = cache.evictable_blocks();
                ASSERT_EQ(cache.evict(INT32_MAX), counted) << "round " << round << " step " << step;
                ASSERT_EQ(cache.evictable_blocks(), 0);
                ++checked;
                nonzero += counted > 0 ? 1 : 0;
            }
        }
        ASSERT_TRUE(h.drain(2000));
        EXPECT_TRUE(h.blocks_all_back());
    }
    EXPECT_GT(nonzero, checked / 4);  // the check saw real evictable blocks, not only zeros
}

}  // namespace
}  // namespace tessera
