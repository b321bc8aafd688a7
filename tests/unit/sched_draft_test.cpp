// Speculative drafts in the scheduler, without a model: a draft runs with its
// sequence's decode (budget and blocks permitting, never preempting anyone),
// counts as computed only once accepted, never reaches the prefix cache, and
// rejected positions give their blocks back.
#include <gtest/gtest.h>

#include <vector>

#include "sched_harness.h"

namespace tessera {
namespace {

SchedulerOptions options(int32_t budget = 512) {
    return SchedulerOptions{.max_batch_tokens = budget, .max_seqs = 64, .prefix_cache = true, .prefill_share = 0};
}

// Prefills the prompts in one step and appends one sampled token to each:
// they all decode next.
std::vector<Sequence*> decoding(Scheduler& s, std::deque<Sequence>& seqs, std::vector<Tokens> prompts) {
    std::vector<Sequence*> out;
    for (Tokens& p : prompts) {
        Sequence& seq = seqs.emplace_back();
        s.add(&seq, NewSequence{seqs.size(), std::move(p)});
        out.push_back(&seq);
    }
    s.commit(s.schedule());
    for (Sequence* seq : out) s.append_token(seq, 500);
    return out;
}

TEST(SchedDraftTest, ADraftRunsWithTheDecodeAndCountsOnlyOnceAccepted) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(32);
    Scheduler s(pool, kBlock, options());
    Sequence& seq = *decoding(s, seqs, {prefix_then(0, 10, 1)})[0];
    s.set_draft(&seq, {501, 502, 503});
    ScheduleOutput out = s.schedule();
    ASSERT_EQ(out.runs.size(), 1u);
    EXPECT_EQ(out.runs[0].n_tokens, 4);
    EXPECT_EQ(out.runs[0].n_draft, 3);
    EXPECT_TRUE(out.runs[0].logits);
    EXPECT_EQ(out.n_tokens, 4);  // the budget pays for drafted positions too
    s.commit(out);
    EXPECT_EQ(seq.n_computed, 11);  // the sampled token only
    // The target accepts 501 and 502, then samples 600 instead of 503.
    s.append_token(&seq, 501);
    s.append_token(&seq, 502);
    s.append_token(&seq, 600);
    s.accept_drafted(&seq, 2);
    s.end_draft(&seq);
    EXPECT_EQ(seq.n_computed, 13);
    EXPECT_TRUE(seq.draft.empty());
    EXPECT_EQ(seq.n_uncomputed(), 1);  // 600 decodes next, alone
    out = s.schedule();
    ASSERT_EQ(out.runs.size(), 1u);
    EXPECT_EQ(out.runs[0].n_tokens, 1);
    EXPECT_EQ(out.runs[0].n_draft, 0);
}

TEST(SchedDraftTest, ADraftIsCutToTheStepsBudget) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(32);
    Scheduler s(pool, kBlock, options(4));
    Sequence& seq = *decoding(s, seqs, {prefix_then(0, 3, 1)})[0];
    s.set_draft(&seq, {1, 2, 3, 4, 5, 6, 7, 8});
    ScheduleOutput out = s.schedule();
    ASSERT_EQ(out.runs.size(), 1u);
    EXPECT_EQ(out.runs[0].n_draft, 3);
    EXPECT_EQ(out.runs[0].n_tokens, 4);
    EXPECT_EQ(seq.draft.size(), 3u);
}

TEST(SchedDraftTest, RejectedPositionsGiveTheirBlocksBack) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(32);
    Scheduler s(pool, kBlock, options());
    Sequence& seq = *decoding(s, seqs, {prefix_then(0, 15, 1)})[0];  // 16 tokens: one full block
    const int32_t free_before = pool.n_free();
    s.set_draft(&seq, std::vector<int32_t>(20, 9));  // reaches into a third block
    ScheduleOutput out = s.schedule();
    s.commit(out);
    EXPECT_EQ(pool.n_free(), free_before - 2);  // blocks for positions 16..36
    s.append_token(&seq, 42);  // the first drafted token is rejected
    s.end_draft(&seq);
    EXPECT_EQ(seq.n_computed, 16);
    EXPECT_EQ(seq.block_table.size(), 2u);  // position 16 (the new token) needs the second block only
    EXPECT_EQ(pool.n_free(), free_before - 1);
}

TEST(SchedDraftTest, ThePrefixCacheNeverSeesDraftedTokens) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(32);
    Scheduler s(pool, kBlock, options());
    Tokens prompt = prefix_then(0, 10, 1);
    Sequence& seq = *decoding(s, seqs, {prompt})[0];  // tokens: prompt + 500
    // Drafted positions 11..31 would complete the first two blocks.
    std::vector<int32_t> draft(21, 77);
    s.set_draft(&seq, draft);
    ScheduleOutput out = s.schedule();
    s.commit(out);
    EXPECT_EQ(s.prefix_cache().n_nodes(), 0);  // no block is complete with verified tokens
    s.append_token(&seq, 88);  // everything rejected
    s.end_draft(&seq);
    EXPECT_EQ(s.prefix_cache().n_nodes(), 0);
    // A prompt that spells the draft out finds nothing cached.
    Tokens drafted = prompt;
    drafted.push_back(500);
    drafted.insert(drafted.end(), draft.begin(), draft.end());
    EXPECT_EQ(s.prefix_cache().cached_tokens(drafted, 0), 0);
}

TEST(SchedDraftTest, AcceptedDraftTokensAreCachedOnceTheirBlockIsFull) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(32);
    Scheduler s(pool, kBlock, options());
    Tokens prompt = prefix_then(0, 10, 1);
    Sequence& seq = *decoding(s, seqs, {prompt})[0];
    const std::vector<int32_t> draft = {21, 22, 23, 24, 25, 26, 27};
    s.set_draft(&seq, draft);
    s.commit(s.schedule());
    for (int32_t t : draft) s.append_token(&seq, t);
    s.append_token(&seq, 99);
    s.accept_drafted(&seq, 7);  // positions 0..17 computed: the first block is full
    s.end_draft(&seq);
    EXPECT_EQ(seq.n_computed, 18);
    Tokens verified(seq.tokens.begin(), seq.tokens.begin() + 16);
    verified.push_back(1);
    EXPECT_EQ(s.prefix_cache().cached_tokens(verified, 0), 16);
}

TEST(SchedDraftTest, ADraftThatDoesNotFitIsDroppedWithoutPreempting) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(2);
    Scheduler s(pool, kBlock, options());
    const std::vector<Sequence*> ab = decoding(s, seqs, {prefix_then(0, 10, 1), prefix_then(0, 10, 2)});
    Sequence& a = *ab[0];  // one block each (11 tokens)
    Sequence& b = *ab[1];
    s.set_draft(&a, std::vector<int32_t>(10, 3));  // would need a third block
    ScheduleOutput out = s.schedule();
    EXPECT_EQ(out.n_preempted, 0);
    ASSERT_EQ(out.runs.size(), 2u);
    EXPECT_EQ(out.runs[0].n_draft, 0);
    EXPECT_EQ(out.runs[0].n_tokens, 1);
    EXPECT_TRUE(a.draft.empty());
    EXPECT_EQ(b.status, SeqStatus::Running);
}

TEST(SchedDraftTest, APreemptedSequenceLosesItsDraft) {
    std::deque<Sequence> seqs;  // outlives the scheduler, which releases them
    BlockPool pool(2);
    Scheduler s(pool, kBlock, options());
    // 16-token prompts fill a block each; the sampled tokens need more.
    const std::vector<Sequence*> ab = decoding(s, seqs, {prefix_then(0, 16, 1), prefix_then(0, 16, 2)});
    Sequence& a = *ab[0];
    Sequence& b = *ab[1];
    s.set_draft(&b, {4, 5});
    ScheduleOutput out = s.schedule();  // a takes the last block; b, the newest, is preempted
    EXPECT_EQ(out.n_preempted, 1);
    EXPECT_EQ(b.status, SeqStatus::Waiting);
    EXPECT_TRUE(b.draft.empty());
    EXPECT_EQ(a.status, SeqStatus::Running);
}

}  // namespace
}  // namespace tessera
