// Speculative sampling's rule (Sampler::sample_speculative) keeps the
// target's distribution for any draft distribution q: chi-square of the
// tokens it returns against p, for q far from p, q with mass where p has
// none, q equal to p and a point mass; plus the acceptance rate and
// sample_with_distribution's q.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "sample/sampler.h"

namespace tessera {
namespace {

constexpr int32_t kVocab = 6;
const std::vector<float> kLogits = {1.0f, 0.2f, -0.5f, 2.0f, 0.7f, -3.0f};

// Temperature 1 and top-k 4: p is the softmax of the four largest logits.
SamplingParams target_chain(uint64_t seed) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_k = 4;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

std::vector<double> target_p() {
    std::vector<double> p(kVocab, 0.0);
    double z = 0.0;
    for (int32_t id : {0, 1, 3, 4}) z += std::exp(static_cast<double>(kLogits[static_cast<size_t>(id)]));
    for (int32_t id : {0, 1, 3, 4}) p[static_cast<size_t>(id)] = std::exp(static_cast<double>(kLogits[static_cast<size_t>(id)])) / z;
    return p;
}

double chi_square(const std::vector<int>& counts, const std::vector<double>& p, int n) {
    double stat = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0.0) {
            EXPECT_EQ(counts[i], 0) << "token " << i << " has no mass under p";
            continue;
        }
        const double e = p[i] * n;
        stat += (counts[i] - e) * (counts[i] - e) / e;
    }
    return stat;
}

struct Outcome {
    std::vector<int> counts = std::vector<int>(kVocab, 0);
    std::vector<int> draft_counts = std::vector<int>(kVocab, 0);
    int accepted = 0;
};

Outcome speculate(const std::vector<float>& q, int n, uint64_t seed) {
    Sampler target(target_chain(seed), kVocab);
    std::mt19937_64 draft_rng(seed + 1000);
    std::discrete_distribution<int32_t> draw_q(q.begin(), q.end());
    Outcome r;
    for (int i = 0; i < n; ++i) {
        const int32_t d = draw_q(draft_rng);
        const int32_t t = target.sample_speculative(kLogits, d, q);
        ++r.counts[static_cast<size_t>(t)];
        ++r.draft_counts[static_cast<size_t>(d)];
        r.accepted += t == d;
    }
    return r;
}

// Critical value of chi-square with 3 degrees of freedom at 0.001.
constexpr double kChi2Df3At0001 = 16.27;

TEST(SampleSpeculative, KeepsTheTargetDistributionForAnyDraftDistribution) {
    const std::vector<double> p = target_p();
    const std::vector<std::vector<float>> drafts = {
        {0.05f, 0.05f, 0.3f, 0.05f, 0.25f, 0.3f},  // far from p, mass on tokens top-k removed
        {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f},      // a point mass on a minor token
        {0.25f, 0.25f, 0.0f, 0.25f, 0.25f, 0.0f},  // p's support, flat
    };
    constexpr int n = 60000;
    for (size_t k = 0; k < drafts.size(); ++k) {
        const Outcome r = speculate(drafts[k], n, 7 + k);
        EXPECT_LT(chi_square(r.counts, p, n), kChi2Df3At0001) << "draft distribution " << k;
        double overlap = 0.0;  // the rule accepts with probability sum_x min(p(x), q(x))
        for (size_t x = 0; x < p.size(); ++x) overlap += std::min(p[x], static_cast<double>(drafts[k][x]));
        EXPECT_NEAR(static_cast<double>(r.accepted) / n, overlap, 0.01) << "draft distribution " << k;
    }
}

TEST(SampleSpeculative, TheStatisticSeesADistributionOtherThanP) {
    // Power check: taking the drafts unverified (their distribution is q)
    // fails the same test by a wide margin.
    const std::vector<double> p = target_p();
    const std::vector<float> q = {0.25f, 0.25f, 0.0f, 0.25f, 0.25f, 0.0f};
    constexpr int n = 60000;
    const Outcome r = speculate(q, n, 3);
    EXPECT_GT(chi_square(r.draft_counts, p, n), 100 * kChi2Df3At0001);
}

TEST(SampleSpeculative, ADraftDistributionEqualToPIsAlwaysAccepted) {
    const std::vector<double> p = target_p();
    const std::vector<float> q(p.begin(), p.end());
    const Outcome r = speculate(q, 20000, 5);
    EXPECT_EQ(r.accepted, 20000);
}

TEST(SampleSpeculative, SampleWithDistributionWritesTheChainsDistribution) {
    Sampler s(target_chain(11), kVocab);
    std::vector<float> q(kVocab, -1.0f);
    const std::vector<double> p = target_p();
    std::vector<int> counts(kVocab, 0);
    constexpr int n = 40000;
    for (int i = 0; i < n; ++i) {
        const int32_t t = s.sample_with_distribution(kLogits, q);
        ++counts[static_cast<size_t>(t)];
        for (size_t x = 0; x < p.size(); ++x) ASSERT_NEAR(q[x], p[x], 1e-6) << "token " << x;
    }
    EXPECT_LT(chi_square(counts, p, n), kChi2Df3At0001);
}

TEST(SampleSpeculative, GreedyParametersTakeTheArgmax) {
    SamplingParams greedy = target_chain(1);
    greedy.temperature = 0.0f;
    Sampler s(greedy, kVocab);
    std::vector<float> q(kVocab, 0.0f);
    EXPECT_EQ(s.sample_with_distribution(kLogits, q), 3);
    EXPECT_EQ(q, (std::vector<float>{0, 0, 0, 1, 0, 0}));
    // The rule never overrides greedy decoding: the draft stands only as the argmax.
    EXPECT_EQ(s.sample_speculative(kLogits, 4, q), 3);
    EXPECT_EQ(s.sample_speculative(kLogits, 3, q), 3);
}

}  // namespace
}  // namespace tessera
