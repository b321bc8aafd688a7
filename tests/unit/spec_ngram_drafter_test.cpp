// Prompt-lookup drafts on hand-checkable token lists, and the adaptive draft
// length.
#include <gtest/gtest.h>

#include <vector>

#include "spec/draft_length.h"
#include "spec/ngram_drafter.h"

namespace tessera {
namespace {

using Tokens = std::vector<int32_t>;

Tokens draft(const NgramDrafter& d, const Tokens& tokens, int32_t k) {
    Tokens out = {-1};  // cleared by the drafter
    d.draft(tokens, k, out);
    return out;
}

TEST(NgramDrafterTest, ProposesWhatFollowedTheLastOccurrenceOfTheSuffix) {
    NgramDrafter d(NgramOptions{2, 4});
    //                 0  1  2  3  4  5  6  7  8
    const Tokens t = {5, 6, 7, 8, 9, 1, 5, 6, 7};
    EXPECT_EQ(draft(d, t, 3), (Tokens{8, 9, 1}));
    EXPECT_EQ(draft(d, t, 10), (Tokens{8, 9, 1, 5, 6, 7}));  // up to the end of the sequence
    EXPECT_EQ(draft(d, t, 0), Tokens{});
}

TEST(NgramDrafterTest, PrefersTheLongestSuffixThenTheMostRecentMatch) {
    NgramDrafter d(NgramOptions{2, 3});
    // "2 3" occurs twice; only the first occurrence extends to "1 2 3".
    const Tokens t = {1, 2, 3, 40, 9, 2, 3, 50, 1, 2, 3};
    EXPECT_EQ(draft(d, t, 1), Tokens{40});
    NgramDrafter two(NgramOptions{2, 2});
    EXPECT_EQ(draft(two, t, 1), Tokens{50});  // the most recent "2 3"
}

TEST(NgramDrafterTest, NoMatchOrTooShortGivesNoDraft) {
    NgramDrafter d(NgramOptions{2, 4});
    EXPECT_EQ(draft(d, {1, 2, 3, 4, 5}, 4), Tokens{});
    EXPECT_EQ(draft(d, {7}, 4), Tokens{});
    EXPECT_EQ(draft(d, {}, 4), Tokens{});
    // A single repeated token matches only from min_n on.
    EXPECT_EQ(draft(d, {3, 1, 2, 3}, 4), Tokens{});
    NgramDrafter one(NgramOptions{1, 4});
    EXPECT_EQ(draft(one, {3, 1, 2, 3}, 4), (Tokens{1, 2, 3}));
}

TEST(NgramDrafterTest, ProposeFillsEveryRequest) {
    NgramDrafter d;
    const Tokens a = {1, 2, 3, 1, 2};
    const Tokens b = {4, 5, 6};
    Tokens out_a, out_b = {9};
    std::vector<DraftRequest> r = {{1, a, 2, &out_a}, {2, b, 2, &out_b}};
    d.propose(r);
    EXPECT_EQ(out_a, (Tokens{3, 1}));
    EXPECT_EQ(out_b, Tokens{});
}

TEST(DraftLengthTest, GrowsOnFullAcceptanceAndShrinksPastTheAcceptedRun) {
    DraftLength k(8);
    EXPECT_EQ(k.next(), 8);
    k.update(8, 2);
    EXPECT_EQ(k.next(), 3);
    k.update(3, 0);
    EXPECT_EQ(k.next(), 1);
    k.update(1, 1);
    EXPECT_EQ(k.next(), 3);
    k.update(3, 3);
    EXPECT_EQ(k.next(), 5);
    k.update(0, 0);  // nothing drafted: unchanged
    EXPECT_EQ(k.next(), 5);
    k.update(5, 5);
    k.update(7, 7);
    EXPECT_EQ(k.next(), 8);  // capped
    DraftLength off(0);
    off.update(1, 1);
    EXPECT_EQ(off.next(), 0);
}

}  // namespace
}  // namespace tessera
