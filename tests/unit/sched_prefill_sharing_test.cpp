// Scheduler + prefix cache without a model: a shared prefix that is still
// being prefilled is computed once (the others wait for its blocks), holds
// never starve or deadlock (cancellation, preemption, memory pressure), and
// every block comes back.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sched/prefill_sharing.h"
#include "sched_harness.h"

namespace tessera {
namespace {

TEST(PrefillSharingTest, PendingSharedTokensIsBlockAlignedAndOnlyForUncomputedBlocks) {
    Sequence r;
    r.tokens = prefix_then(100, 10, 1);
    r.n_computed = 32;
    std::list<Sequence*> running{&r};
    const Tokens w = prefix_then(100, 10, 2);
    EXPECT_EQ(pending_shared_tokens(w, 0, running, kBlock), 96);
    EXPECT_EQ(pending_shared_tokens(w, 1, running, kBlock), 0);  // other salt
    r.n_computed = 96;  // all shared blocks computed (hence cached): nothing pending
    EXPECT_EQ(pending_shared_tokens(w, 0, running, kBlock), 0);
}

TEST(PrefillSharingTest, EightRequestsWithOneLongPrefixComputeItOnce) {
    // 8 prompts: a common 200-token prefix (12 whole blocks = 192 tokens) and
    // a unique 10-token suffix, submitted in the same step.
    Harness h(512, SchedulerOptions{.max_batch_tokens = 512, .max_seqs = 64, .prefix_cache = true});
    std::vector<Sequence*> seqs;
    for (int k = 0; k < 8; ++k) seqs.push_back(&h.submit(prefix_then(200, 10, k), 1));
    ASSERT_TRUE(h.drain(100));
    // The first computes all 210 tokens; each other only 210 - 192.
    EXPECT_EQ(h.prefill_tokens(), 210 + 7 * 18);
    EXPECT_EQ(seqs[0]->n_cached, 0);
    for (int k = 1; k < 8; ++k) EXPECT_EQ(seqs[k]->n_cached, 192) << k;
    EXPECT_EQ(h.sched().prefix_hit_tokens(), 7u * 192u);
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, WithoutThePrefixCacheEveryoneComputesEverything) {
    Harness h(512, SchedulerOptions{.max_batch_tokens = 512, .max_seqs = 64, .prefix_cache = false});
    for (int k = 0; k < 8; ++k) h.submit(prefix_then(200, 10, k), 1);
    ASSERT_TRUE(h.drain(100));
    EXPECT_EQ(h.prefill_tokens(), 8 * 210);
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, SequencesThatShareNothingPassAHeldOne) {
    Harness h(512, SchedulerOptions{.max_batch_tokens = 512, .max_seqs = 64, .prefix_cache = true});
    Sequence& leader = h.submit(prefix_then(200, 10, 0), 4);
    Sequence& follower = h.submit(prefix_then(200, 10, 1), 4);
    Sequence& other = h.submit(prefix_then(0, 40, 2), 4);
    h.step();
    EXPECT_EQ(leader.status, SeqStatus::Running);
    EXPECT_EQ(follower.status, SeqStatus::Waiting);  // held: keeps its place
    EXPECT_EQ(other.status, SeqStatus::Running);
    h.step();
    EXPECT_EQ(follower.status, SeqStatus::Running);
    EXPECT_EQ(follower.n_cached, 192);
    ASSERT_TRUE(h.drain(100));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, HeldSequenceIsAdmittedOnceTheSharedBlocksAreCached) {
    // A 64-token budget: the leader computes its 210 tokens in chunks of 64,
    // 64, 64 and 18; the 12 shared blocks are cached after the third.
    Harness h(512, SchedulerOptions{.max_batch_tokens = 64, .max_seqs = 64, .prefix_cache = true});
    h.submit(prefix_then(200, 10, 0), 4);
    Sequence& follower = h.submit(prefix_then(200, 10, 1), 4);
    for (int i = 0; i < 3; ++i) {
        h.step();
        EXPECT_EQ(follower.status, SeqStatus::Waiting) << "step " << i;
    }
    h.step();  // the leader's last 18 tokens and the follower's own 18
    EXPECT_EQ(follower.status, SeqStatus::Running);
    EXPECT_EQ(follower.n_cached, 192);
    ASSERT_TRUE(h.drain(100));
    EXPECT_EQ(h.prefill_tokens(), 210 + 18);
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, CancellingThePrefillingSequenceEndsTheHold) {
    Harness h(512, SchedulerOptions{.max_batch_tokens = 64, .max_seqs = 64, .prefix_cache = true});
    Sequence& leader = h.submit(prefix_then(200, 10, 0), 4);
    Sequence& follower = h.submit(prefix_then(200, 10, 1), 4);
    h.step();  // leader computes 64 tokens = 4 blocks, now cached
    EXPECT_EQ(follower.status, SeqStatus::Waiting);
    h.finish(leader);  // cancelled, as the engine does it
    h.step();
    EXPECT_EQ(follower.status, SeqStatus::Running);
    EXPECT_EQ(follower.n_cached, 64);  // what the leader got to compute
    ASSERT_TRUE(h.drain(100));
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, PreemptingThePrefillingSequenceDoesNotDeadlock) {
    // 24 blocks; a 250-token sequence holds 16 of them and decodes. The
    // leader runs out of blocks mid-prefill and, being the newest, is
    // preempted while the follower waits on it; everything still drains.
    Harness h(24, SchedulerOptions{.max_batch_tokens = 48, .max_seqs = 64, .prefix_cache = true});
    Sequence& decoder = h.submit(prefix_then(0, 250, 9), 60);
    while (decoder.n_computed < decoder.n_prompt) h.step();
    Sequence& leader = h.submit(prefix_then(200, 10, 0), 4);
    Sequence& follower = h.submit(prefix_then(200, 10, 1), 4);
    bool leader_preempted_while_holding = false;
    for (int i = 0; i < 2000 && !h.sched().idle(); ++i) {
        const bool was_prefilling = leader.status == SeqStatus::Running && leader.n_computed < leader.n_prompt;
        const bool follower_held = follower.status == SeqStatus::Waiting;
        h.step();
        if (was_prefilling && follower_held && leader.status == SeqStatus::Waiting) {
            leader_preempted_while_holding = true;
        }
    }
    EXPECT_TRUE(leader_preempted_while_holding);
    EXPECT_TRUE(h.sched().idle());
    EXPECT_EQ(follower.status, SeqStatus::Finished);
    EXPECT_TRUE(h.blocks_all_back());
}

TEST(PrefillSharingTest, RandomWorkloadsUnderMemoryPressureAlwaysDrain) {
    std::mt19937 rng(11);
    int64_t preempted = 0;
    for (int round = 0; round < 40; ++round) {
        const int n_blocks = 18 + static_cast<int>(rng() % 24);  // the longest sequence needs 17
        const int budget = 16 + static_cast<int>(rng() % 100);
        Harness h(n_blocks, SchedulerOptions{.max_batch_tokens = budget, .max_seqs = 1 + static_cast<int>(rng() % 8),
                                             .prefix_cache = true});
        std::vector<Sequence*> live;
        for (int k = 0; k < 12; ++k) {
            const auto n_prefix = static_cast<int32_t>(rng() % 3 == 0 ? 0 : 40 + rng() % 120);
            live.push_back(&h.submit(prefix_then(n_prefix, 1 + static_cast<int32_t>(rng() % 30), k),
                                     1 + static_cast<int32_t>(rng() % 80), rng() % 4 == 0 ? 1 : 0));
            if (rng() % 2) h.step();
            if (rng() % 6 == 0) {  // cancel someone still in the scheduler
                Sequence* s = live[rng() % live.size()];
                if (s->status != SeqStatus::Finished) h.finish(*s);
            }
        }
        ASSERT_TRUE(h.drain(5000)) << "round " << round;
        EXPECT_TRUE(h.blocks_all_back()) << "round " << round;
        preempted += h.preempted();
    }
    EXPECT_GT(preempted, 40);  // the pools are small enough to force it
}

}  // namespace
}  // namespace tessera
