// Each sampling-chain step on small logits whose expected result is worked out
// by hand in the comments, from the step's definition.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sample/logits_processors.h"

namespace tessera {
namespace {

Candidates make(const std::vector<float>& logits) {
    Candidates c;
    c.reset_from(logits);
    return c;
}

std::vector<int32_t> ids(const Candidates& c) {
    std::vector<int32_t> out;
    for (const auto& t : c.items) out.push_back(t.id);
    return out;
}

// Logits whose softmax is exactly `probs` (log of each probability).
std::vector<float> log_of(const std::vector<double>& probs) {
    std::vector<float> out;
    for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
    return out;
}

TEST(SampleProcessors, PenaltiesFollowTheDefinition) {
    // Window has token 0 twice, tokens 1 and 3 once. repeat 2, freq 0.5, presence 0.25:
    //   t0: 2 > 0 -> 2/2 = 1;     1 - (2*0.5 + 0.25) = -0.25
    //   t1: -1 < 0 -> -1*2 = -2; -2 - (1*0.5 + 0.25) = -2.75
    //   t2: not in window -> 0.5
    //   t3: 3/2 = 1.5;           1.5 - 0.75 = 0.75
    Candidates c = make({2.0f, -1.0f, 0.5f, 3.0f});
    std::vector<int32_t> window = {0, 1, 0, 3};
    std::vector<int32_t> counts(4, 0);
    apply_penalties(c, window, 2.0f, 0.5f, 0.25f, counts);
    EXPECT_FLOAT_EQ(c.items[0].logit, -0.25f);
    EXPECT_FLOAT_EQ(c.items[1].logit, -2.75f);
    EXPECT_FLOAT_EQ(c.items[2].logit, 0.5f);
    EXPECT_FLOAT_EQ(c.items[3].logit, 0.75f);
    EXPECT_EQ(counts, std::vector<int32_t>(4, 0));  // scratch handed back clean
}

TEST(SampleProcessors, LogitBiasAddsAndBans) {
    Candidates c = make({0.0f, 0.0f, 0.0f});
    std::vector<std::pair<int32_t, float>> bias = {{1, 2.5f}, {2, -INFINITY}, {1, 0.5f}};
    apply_logit_bias(c, bias);
    EXPECT_FLOAT_EQ(c.items[0].logit, 0.0f);
    EXPECT_FLOAT_EQ(c.items[1].logit, 3.0f);  // 2.5 + 0.5: repeated ids add up
    EXPECT_EQ(c.items[2].logit, -INFINITY);
}

TEST(SampleProcessors, TopKKeepsHighestWithIdTieBreak) {
    // Sorted by (logit desc, id asc): 1 (3), 3 (3), 2 (2), 0 (1), 4 (0).
    Candidates c = make({1.0f, 3.0f, 2.0f, 3.0f, 0.0f});
    top_k(c, 2);
    EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3}));
    Candidates d = make({1.0f, 3.0f, 2.0f, 3.0f, 0.0f});
    top_k(d, 3);
    EXPECT_EQ(ids(d), (std::vector<int32_t>{1, 3, 2}));
    Candidates e = make({1.0f, 3.0f, 2.0f});
    top_k(e, 0);  // disabled
    EXPECT_EQ(ids(e), (std::vector<int32_t>{0, 1, 2}));
}

TEST(SampleProcessors, SoftmaxRecoversProbabilities) {
    Candidates c = make(log_of({0.1, 0.2, 0.3, 0.4}));
    softmax(c);
    EXPECT_NEAR(c.items[0].p, 0.1f, 1e-6);
    EXPECT_NEAR(c.items[1].p, 0.2f, 1e-6);
    EXPECT_NEAR(c.items[2].p, 0.3f, 1e-6);
    EXPECT_NEAR(c.items[3].p, 0.4f, 1e-6);
}

TEST(SampleProcessors, TopPKeepsSmallestPrefixReachingP) {
    // Probabilities 0.4, 0.3, 0.2, 0.1 (ids 0..3); cumulative 0.4, 0.7, 0.9, 1.0.
    const std::vector<float> logits = log_of({0.4, 0.3, 0.2, 0.1});
    Candidates a = make(logits);
    top_p(a, 0.65f);  // 0.4 < 0.65 <= 0.7 -> two tokens
    EXPECT_EQ(ids(a), (std::vector<int32_t>{0, 1}));
    Candidates b = make(logits);
    top_p(b, 0.75f);  // 0.7 < 0.75 <= 0.9 -> three
    EXPECT_EQ(ids(b), (std::vector<int32_t>{0, 1, 2}));
    Candidates d = make(logits);
    top_p(d, 0.0f);  // always at least one
    EXPECT_EQ(ids(d), (std::vector<int32_t>{0}));
    Candidates e = make(logits);
    top_p(e, 1.0f);  // disabled
    EXPECT_EQ(e.items.size(), 4u);
}

TEST(SampleProcessors, MinPKeepsTokensAboveScaledMax) {
    // p = 0.5, 0.25, 0.15, 0.1. min_p 0.25 -> threshold 0.125: keeps 0.5, 0.25, 0.15.
    const std::vector<float> logits = log_of({0.1, 0.5, 0.15, 0.25});
    Candidates a = make(logits);
    min_p(a, 0.25f);
    EXPECT_EQ(ids(a), (std::vector<int32_t>{1, 3, 2}));
    Candidates b = make(logits);
    min_p(b, 0.6f);  // threshold 0.3: only 0.5
    EXPECT_EQ(ids(b), (std::vector<int32_t>{1}));
}

TEST(SampleProcessors, TypicalKeepsTokensNearTheEntropy) {
    // p = 1/2, 1/4, 1/8, 1/8. H = 1/2 ln2 + 1/4 ln4 + 2 * 1/8 ln8 = 1.75 ln2.
    // Surprisals ln2, 2ln2, 3ln2, 3ln2 -> distances 0.75, 0.25, 1.25, 1.25 (x ln2).
    // Typical order: t1, t0, t2, t3 with masses 0.25, 0.75, 0.875, 1.0.
    const std::vector<float> logits = log_of({0.5, 0.25, 0.125, 0.125});
    Candidates a = make(logits);
    typical(a, 0.5f);  // 0.25 <= 0.5 < 0.75 -> {t1, t0}, re-sorted by logit
    EXPECT_EQ(ids(a), (std::vector<int32_t>{0, 1}));
    Candidates b = make(logits);
    typical(b, 0.2f);  // 0.25 > 0.2 -> {t1}: the most likely token is not typical
    EXPECT_EQ(ids(b), (std::vector<int32_t>{1}));
    Candidates d = make(logits);
    typical(d, 0.9f);  // needs all four
    EXPECT_EQ(ids(d), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(SampleProcessors, TemperatureDividesLogits) {
    Candidates c = make({2.0f, -1.0f});
    apply_temperature(c, 0.5f);
    EXPECT_FLOAT_EQ(c.items[0].logit, 4.0f);
    EXPECT_FLOAT_EQ(c.items[1].logit, -2.0f);
}

TEST(SampleProcessors, GreedyPicksLowestIdOnTies) {
    EXPECT_EQ(pick_greedy(make({1.0f, 5.0f, 5.0f, 2.0f})), 1);
    EXPECT_EQ(pick_greedy(make({-INFINITY, -3.0f})), 1);
}

TEST(SampleProcessors, RandomPickMatchesDistribution) {
    // 20000 draws from p = (0.1, 0.2, 0.3, 0.4, 0) with a fixed seed. Pearson's
    // chi-square over the 4 possible tokens has 3 degrees of freedom; its
    // 1 - 1e-4 quantile is 21.1, so a correct sampler fails this bound only for
    // a 1-in-10^4 seed, and the fixed seed makes the outcome reproducible.
    std::vector<float> logits = log_of({0.1, 0.2, 0.3, 0.4});
    logits.push_back(-INFINITY);  // zero probability: must never be drawn
    const std::vector<double> expected = {0.1, 0.2, 0.3, 0.4};
    std::mt19937_64 rng(12345);
    Candidates c;
    std::vector<int> hist(5, 0);
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) {
        c.reset_from(logits);
        ++hist[static_cast<size_t>(pick_random(c, rng))];
    }
    EXPECT_EQ(hist[4], 0);
    double chi2 = 0.0;
    for (size_t i = 0; i < 4; ++i) {
        const double e = expected[i] * kDraws;
        chi2 += (hist[i] - e) * (hist[i] - e) / e;
    }
    EXPECT_LT(chi2, 21.1);
}

}  // namespace
}  // namespace tessera
