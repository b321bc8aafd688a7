// Fair prefill (SchedulerOptions::prefill_share) without a model: a short
// prompt that arrives while long prompts are being prefilled runs in the
// next step, the long ones keep progressing, the oldest prompt is never
// starved by a stream of short ones, and FCFS (share 0) is still available.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sched_harness.h"

namespace tessera {
namespace {

// Tokens the step gave seq (0 when it did not run).
int32_t tokens_of(const ScheduleOutput& out, const Sequence& seq) {
    for (const ScheduledRun& r : out.runs) {
        if (r.seq == &seq) return r.n_tokens;
    }
    return 0;
}

SchedulerOptions options(int32_t budget, int32_t share) {
    return SchedulerOptions{.max_batch_tokens = budget, .max_seqs = 64, .prefix_cache = true, .prefill_share = share};
}

TEST(SchedFairnessTest, ShortPromptRunsInTheNextStepWhileALongPromptPrefills) {
    Harness h(1024, options(512, -1));  // default share: 512 / 4
    Sequence& lng = h.submit(prefix_then(0, 6000, 1), 4);
    ScheduleOutput out = h.step();
    EXPECT_EQ(tokens_of(out, lng), 512);  // alone, it takes the whole budget
    Sequence& shrt = h.submit(prefix_then(0, 20, 2), 8);
    out = h.step();
    EXPECT_EQ(tokens_of(out, shrt), 20);  // its whole prompt: the first token is sampled now
    EXPECT_EQ(tokens_of(out, lng), 512 - 20);
    EXPECT_EQ(out.n_tokens, 512);
    out = h.step();
    EXPECT_EQ(tokens_of(out, shrt), 1);  // decoding, first as always
    EXPECT_EQ(tokens_of(out, lng), 511);
    ASSERT_TRUE(h.drain(100));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedFairnessTest, FcfsShareZeroLetsTheLongPromptTakeTheStep) {
    // The behaviour the share exists to fix: the short prompt waits for the
    // whole long prefill.
    Harness h(1024, options(512, 0));
    Sequence& lng = h.submit(prefix_then(0, 6000, 1), 4);
    h.step();
    Sequence& shrt = h.submit(prefix_then(0, 20, 2), 8);
    int steps = 0;
    while (shrt.n_computed == 0) {
        const ScheduleOutput out = h.step();
        ++steps;
        if (shrt.n_computed == 0) {
            EXPECT_EQ(tokens_of(out, lng), 512);
        }
    }
    EXPECT_EQ(steps, (6000 - 512 + 511) / 512);  // it got in with the long prompt's last chunk
    ASSERT_TRUE(h.drain(100));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedFairnessTest, MediumPromptIsNotStarvedBySeveralLongOnes) {
    Harness h(2048, options(512, 128));
    std::vector<Sequence*> longs;
    for (int k = 0; k < 3; ++k) longs.push_back(&h.submit(prefix_then(0, 3000, k), 2));
    h.step();
    std::vector<int64_t> before;
    for (Sequence* s : longs) before.push_back(s->n_computed);
    Sequence& medium = h.submit(prefix_then(0, 300, 9), 2);
    int steps = 0;
    while (medium.n_computed < medium.n_prompt) {
        h.step();
        ++steps;
    }
    // 128-token shares: 128, 128, then the last 44; shortest first after the
    // oldest, so the later long prompts are the ones that wait.
    EXPECT_EQ(steps, 3);
    EXPECT_GE(longs[0]->n_computed - before[0], 3 * 128);  // the oldest kept its share every step
    ASSERT_TRUE(h.drain(200));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedFairnessTest, OldestPromptProgressesUnderAStreamOfShortOnes) {
    // Short prompts arrive faster than the budget serves them; the oldest
    // (long) prompt still gets its share of every step and finishes.
    Harness h(4096, options(128, 32));
    Sequence& lng = h.submit(prefix_then(0, 2000, 0), 1);
    int steps = 0;
    for (int64_t last = 0; lng.status != SeqStatus::Finished; ++steps) {
        ASSERT_LT(steps, 2000 / 32 + 1) << "the long prompt starved";
        for (int k = 0; k < 4; ++k) h.submit(prefix_then(0, 40, 100 + steps * 4 + k), 2);
        h.step();
        if (lng.status == SeqStatus::Finished) break;
        EXPECT_GE(lng.n_computed - last, 32) << "step " << steps;
        last = lng.n_computed;
    }
    ASSERT_TRUE(h.drain(5000));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(SchedFairnessTest, EveryShareComputesTheSameTokensAndDrainsUnderMemoryPressure) {
    // Without the prefix cache the work is fixed: every share must compute
    // each prompt exactly once (no preemption: a big pool), and with a small
    // pool every share must still drain and return every block.
    for (int32_t share : {0, 1, 7, 16, -1}) {
        std::mt19937 rng(5);
        Harness big(2048, SchedulerOptions{.max_batch_tokens = 64, .max_seqs = 8, .prefix_cache = false,
                                           .prefill_share = share});
        int64_t prompt_tokens = 0;
        for (int k = 0; k < 12; ++k) {
            const auto n = static_cast<int32_t>(1 + rng() % 300);
            prompt_tokens += n;
            big.submit(prefix_then(0, n, k), 1 + static_cast<int32_t>(rng() % 20));
            if (rng() % 2) big.step();
        }
        ASSERT_TRUE(big.drain(2000)) << "share " << share;
        EXPECT_EQ(big.prefill_tokens(), prompt_tokens) << "share " << share;
        EXPECT_EQ(big.preempted(), 0) << "share " << share;
        EXPECT_TRUE(big.blocks_all_back());

        for (int round = 0; round < 20; ++round) {
            Harness small(16 + static_cast<int>(rng() % 16), options(16 + static_cast<int32_t>(rng() % 80), share));
            for (int k = 0; k < 10; ++k) {
                const auto n_prefix = static_cast<int32_t>(rng() % 3 == 0 ? 0 : 40 + rng() % 100);
                small.submit(prefix_then(n_prefix, 1 + static_cast<int32_t>(rng() % 30), k),
                             1 + static_cast<int32_t>(rng() % 60));
                if (rng() % 2) small.step();
            }
            ASSERT_TRUE(small.drain(5000)) << "share " << share << " round " << round;
            EXPECT_TRUE(small.blocks_all_back()) << "share " << share << " round " << round;
        }
    }
}

}  // namespace
}  // namespace tessera
