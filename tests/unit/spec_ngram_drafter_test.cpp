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

TEST(DraftLengthTest, StartsFromThePriorsBestLength) {
    // a = 2/3, w = 0.3: E(k) / (1 + 0.3 k) is 1.28, 1.32, 1.27 for k = 1, 2, 3.
    DraftLength k(8, 0, 0.3);
    EXPECT_NEAR(k.acceptance(), 2.0 / 3.0, 1e-12);
    EXPECT_EQ(k.next(), 2);
}

TEST(DraftLengthTest, DraftsTheMaximumWhileDraftsAreAccepted) {
    DraftLength k(8, 0, 0.3);
    for (int i = 0; i < 4; ++i) k.update(8, 8);
    EXPECT_GT(k.acceptance(), 0.9);
    EXPECT_EQ(k.next(), 8);
}

TEST(DraftLengthTest, PausesWhenDraftsDoNotPayAndProbesAgain) {
    DraftLength k(8, 0, 0.3);
    for (int i = 0; i < 4; ++i) k.update(2, 0);  // every draft rejected at once
    // No length beats plain decoding: a pause of 2 steps, then a 1-token probe.
    std::vector<int32_t> lengths;
    for (int i = 0; i < 3; ++i) lengths.push_back(k.next());
    EXPECT_EQ(lengths, (std::vector<int32_t>{0, 0, 1}));
    k.update(1, 0);  // the probe failed too: the next pause is twice as long
    lengths.clear();
    for (int i = 0; i < 5; ++i) lengths.push_back(k.next());
    EXPECT_EQ(lengths, (std::vector<int32_t>{0, 0, 0, 0, 1}));
    // Probes that hold bring drafting back.
    for (int i = 0; i < 3; ++i) k.update(1, 1);
    EXPECT_GT(k.next(), 0);
}

TEST(DraftLengthTest, ACostlyDrafterNeedsMoreAcceptance) {
    // Half the tokens accepted: worth it when drafting is free (only the
    // verification costs), not when each drafted token costs 0.7 of a step.
    DraftLength cheap(8, 0, 0.3), costly(8, 0, 1.0);
    for (int i = 0; i < 8; ++i) {
        cheap.update(2, 1);
        costly.update(2, 1);
    }
    EXPECT_NEAR(cheap.acceptance(), 0.5, 0.05);
    EXPECT_GT(cheap.next(), 0);
    EXPECT_EQ(costly.next(), 0);
}

TEST(DraftLengthTest, AMinimumLengthOverridesTheEstimate) {
    DraftLength k(8, 3, 1.0);  // a same-size draft model: never worth it by the estimate
    for (int i = 0; i < 4; ++i) k.update(3, 0);
    EXPECT_EQ(k.next(), 3);
    EXPECT_EQ(k.next(), 3);  // and no pause
}

TEST(DraftLengthTest, ZeroMaximumNeverDrafts) {
    DraftLength off(0, 0, 0.3);
    off.update(1, 1);
    EXPECT_EQ(off.next(), 0);
}

}  // namespace
}  // namespace tessera
