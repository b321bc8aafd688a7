// The Sampler as a whole: chain order, penalty window, determinism per seed,
// greedy behaviour (its argmax fast path too), check_logits and top_logprobs;
// plus SamplingParams validation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sample/sampler.h"

namespace tessera {
namespace {

std::vector<float> log_of(const std::vector<double>& probs) {
    std::vector<float> out;
    for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
    return out;
}

SamplingParams plain(uint64_t seed) {
    SamplingParams p;  // every processor off, temperature 1
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

std::vector<int32_t> run(Sampler& s, const std::vector<float>& logits, int n) {
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(s.sample(logits));
        s.accept(out.back());
    }
    return out;
}

TEST(SampleSampler, SameSeedSameSequence) {
    const std::vector<float> logits = log_of({0.1, 0.2, 0.3, 0.25, 0.15});
    Sampler a(plain(7), 5), b(plain(7), 5), c(plain(8), 5);
    const auto seq_a = run(a, logits, 200);
    EXPECT_EQ(seq_a, run(b, logits, 200));
    EXPECT_NE(seq_a, run(c, logits, 200));
    a.reset();  // re-seeds: replays the same draws
    EXPECT_EQ(seq_a, run(a, logits, 200));
}

TEST(SampleSampler, GreedyIsArgmaxAfterPenaltiesAndBias) {
    SamplingParams p = plain(0);
    p.temperature = 0.0f;
    p.repeat_penalty = 2.0f;
    Sampler s(p, 3);
    const std::vector<float> logits = {1.0f, 0.9f, 0.9f};
    EXPECT_EQ(s.sample(logits), 0);
    s.accept(0);  // token 0: 1.0 / 2 = 0.5 < 0.9 -> tie of 1 and 2, lowest id wins
    EXPECT_EQ(s.sample(logits), 1);

    SamplingParams q = plain(0);
    q.temperature = -1.0f;
    q.logit_bias = {{2, 0.5f}};  // 0.9 + 0.5 = 1.4 beats 1.0
    Sampler t(q, 3);
    EXPECT_EQ(t.sample(logits), 2);
}

// The greedy fast path (no penalties, no bias: an argmax over the logits
// themselves) picks the token pick_greedy picks from the candidate list.
TEST(SampleSampler, GreedyFastPathIsPickGreedy) {
    SamplingParams p = plain(0);
    p.temperature = 0.0f;
    std::mt19937 rng(13);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    for (int32_t n : {1, 2, 15, 16, 17, 33, 1000, 49152}) {
        Sampler s(p, n);
        for (int round = 0; round < 12; ++round) {
            std::vector<float> logits(static_cast<size_t>(n));
            for (auto& l : logits) l = round % 3 == 0 ? std::round(dist(rng)) : dist(rng);  // rounded: many ties
            if (round == 5) logits.assign(logits.size(), -INFINITY);
            if (round == 6) logits[static_cast<size_t>(n) / 2] = INFINITY;
            if (round == 7) logits[static_cast<size_t>(n) - 1] = 1e30f;
            if (round == 8) logits[0] = -INFINITY;
            Candidates c;
            c.reset_from(logits);
            ASSERT_EQ(s.sample(logits), pick_greedy(c)) << "n=" << n << " round " << round;
            s.accept(0);  // a history without penalties keeps the fast path
        }
    }
}

TEST(SampleSampler, CheckLogitsRejectsNaNAndInfinityAndNoFiniteValue) {
    for (size_t n : {1u, 7u, 16u, 49157u}) {
        std::vector<float> row(n, -1.0f);
        EXPECT_TRUE(check_logits(row).ok()) << n;
        row[0] = -INFINITY;  // -inf is a banned token, allowed
        EXPECT_EQ(check_logits(row).ok(), n > 1) << n;
        for (size_t at : {size_t{0}, n / 2, n - 1}) {
            for (float bad : {NAN, -NAN, INFINITY}) {
                std::vector<float> r(n, 0.5f);
                r[at] = bad;
                const Status st = check_logits(r);
                ASSERT_FALSE(st.ok()) << n << " " << at << " " << bad;
                EXPECT_NE(st.message().find("NaN or infinite"), std::string::npos);
            }
        }
        const Status none = check_logits(std::vector<float>(n, -INFINITY));
        ASSERT_FALSE(none.ok());
        EXPECT_NE(none.message().find("no finite logit"), std::string::npos);
    }
    EXPECT_FALSE(check_logits({}).ok());
}

TEST(SampleSampler, PenaltiesOnlySeeTheLastNTokens) {
    SamplingParams p = plain(0);
    p.temperature = 0.0f;
    p.repeat_penalty = 10.0f;
    p.penalty_last_n = 2;
    Sampler s(p, 4);
    const std::vector<float> logits = {1.0f, 0.9f, 0.8f, 0.7f};
    s.accept(0);  // window {0}: t0 -> 0.1
    EXPECT_EQ(s.sample(logits), 1);
    s.accept(1);  // window {0, 1}
    EXPECT_EQ(s.sample(logits), 2);
    s.accept(2);  // window {1, 2}: token 0 has left it
    EXPECT_EQ(s.sample(logits), 0);
    s.reset();
    EXPECT_EQ(s.sample(logits), 0);
}

TEST(SampleSampler, TruncationThenTemperatureShapesTheDraws) {
    // p = 0.05, 0.1, 0.15, 0.3, 0.4. top_k 3 -> {4, 3, 2}, renormalised
    // 0.4/0.85 = 0.4706, 0.3529, 0.1765. top_p 0.8: 0.4706 < 0.8 <= 0.8235 ->
    // {4, 3}. Temperature 0.5 squares the ratio: 0.16 : 0.09 -> 0.64, 0.36.
    // 20000 draws, chi-square with 1 degree of freedom; 1 - 1e-4 quantile 15.1.
    SamplingParams p = plain(99);
    p.top_k = 3;
    p.top_p = 0.8f;
    p.temperature = 0.5f;
    Sampler s(p, 5);
    const std::vector<float> logits = log_of({0.05, 0.1, 0.15, 0.3, 0.4});
    std::vector<int> hist(5, 0);
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) ++hist[static_cast<size_t>(s.sample(logits))];
    EXPECT_EQ(hist[0] + hist[1] + hist[2], 0);
    const double e4 = 0.64 * kDraws, e3 = 0.36 * kDraws;
    const double chi2 = (hist[4] - e4) * (hist[4] - e4) / e4 + (hist[3] - e3) * (hist[3] - e3) / e3;
    EXPECT_LT(chi2, 15.1);
}

TEST(SampleSampler, MinPRemovesUnlikelyTokens) {
    SamplingParams p = plain(3);
    p.min_p = 0.5f;  // p_max 0.6 -> keep p >= 0.3: tokens 2 (0.6) and 1 (0.3)
    Sampler s(p, 3);
    const std::vector<float> logits = log_of({0.1, 0.3, 0.6});
    for (int i = 0; i < 2000; ++i) EXPECT_NE(s.sample(logits), 0);
}

TEST(SampleSampler, TopLogprobsIsLogSoftmax) {
    // logits (0, ln 3, 0): Z = 1 + 3 + 1 = 5.
    const std::vector<float> logits = {0.0f, std::log(3.0f), 0.0f};
    const auto top = top_logprobs(logits, 2);
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0].first, 1);
    EXPECT_NEAR(top[0].second, std::log(3.0 / 5.0), 1e-6);
    EXPECT_EQ(top[1].first, 0);  // tie with token 2: lower id first
    EXPECT_NEAR(top[1].second, std::log(1.0 / 5.0), 1e-6);
    EXPECT_EQ(top_logprobs(logits, 10).size(), 3u);
    EXPECT_TRUE(top_logprobs(logits, 0).empty());
}

TEST(SampleParams, DefaultsAreValid) {
    EXPECT_TRUE(SamplingParams{}.validate(100).ok());
}

TEST(SampleParams, RejectsBadValues) {
    auto bad = [](auto mutate) {
        SamplingParams p;
        mutate(p);
        return !p.validate(10).ok();
    };
    EXPECT_TRUE(bad([](SamplingParams& p) { p.temperature = NAN; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.top_k = -1; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.top_p = 1.5f; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.top_p = NAN; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.min_p = -0.1f; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.typical_p = 2.0f; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.repeat_penalty = 0.0f; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.presence_penalty = INFINITY; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.frequency_penalty = NAN; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.penalty_last_n = -1; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{10, 1.0f}}; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{-1, 1.0f}}; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{3, NAN}}; }));
    EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{3, INFINITY}}; }));
    EXPECT_FALSE(bad([](SamplingParams& p) { p.logit_bias = {{3, -INFINITY}}; }));
    EXPECT_FALSE(bad([](SamplingParams& p) { p.temperature = -1.0f; }));
    EXPECT_FALSE(SamplingParams{}.validate(0).ok());
}

TEST(SampleParams, BanningEveryTokenIsAnError) {
    SamplingParams p;
    p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}, {0, -INFINITY}};
    const Status st = p.validate(2);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("every token"), std::string::npos);
    p.logit_bias.pop_back();
    p.logit_bias.pop_back();
    EXPECT_TRUE(p.validate(2).ok());
}

}  // namespace
}  // namespace tessera
