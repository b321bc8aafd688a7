// The MoE router (model/moe_router.h): which k experts a token goes to and
// with what weights, for softmax and sigmoid gating, with and without
// renormalisation and a selection bias; ties and NaN logits.
#include "model/moe_router.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace tessera {
namespace {

struct Routed {
    std::vector<int32_t> experts;
    std::vector<float> weights;
};

Routed route(const RouterParams& p, const std::vector<float>& logits) {
    std::vector<float> scratch(2 * logits.size());
    Routed r{std::vector<int32_t>(p.k), std::vector<float>(p.k)};
    route_token(p, logits.data(), scratch, r.experts.data(), r.weights.data());
    return r;
}

std::vector<float> softmax(const std::vector<float>& x) {
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v));
    std::vector<float> out;
    for (float v : x) out.push_back(static_cast<float>(std::exp(static_cast<double>(v)) / sum));
    return out;
}

TEST(MoeRouter, SoftmaxPicksTheLargestWithTheirProbabilities) {
    const std::vector<float> logits{0.5f, 2.0f, -1.0f, 1.5f, 0.0f};
    const Routed r = route({5, 2, ExpertGating::Softmax, false, nullptr}, logits);
    EXPECT_EQ(r.experts, (std::vector<int32_t>{1, 3}));
    const std::vector<float> p = softmax(logits);
    EXPECT_NEAR(r.weights[0], p[1], 1e-6);
    EXPECT_NEAR(r.weights[1], p[3], 1e-6);
    EXPECT_LT(r.weights[0] + r.weights[1], 0.95f);  // not renormalised
}

TEST(MoeRouter, RenormalisedWeightsSumToOneAndKeepTheirRatio) {
    const std::vector<float> logits{0.5f, 2.0f, -1.0f, 1.5f, 0.0f};
    const Routed r = route({5, 3, ExpertGating::Softmax, true, nullptr}, logits);
    EXPECT_EQ(r.experts, (std::vector<int32_t>{1, 3, 0}));
    EXPECT_NEAR(r.weights[0] + r.weights[1] + r.weights[2], 1.0f, 1e-6);
    EXPECT_NEAR(r.weights[0] / r.weights[1], std::exp(0.5f), 1e-5);
    // Mixtral's form: softmax over the chosen logits only.
    const std::vector<float> chosen = softmax({2.0f, 1.5f, 0.5f});
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(r.weights[j], chosen[j], 1e-6);
}

TEST(MoeRouter, SigmoidGatingWeighsEachExpertOnItsOwn) {
    const std::vector<float> logits{-2.0f, 0.3f, 1.0f, -0.1f};
    const Routed r = route({4, 2, ExpertGating::Sigmoid, false, nullptr}, logits);
    EXPECT_EQ(r.experts, (std::vector<int32_t>{2, 1}));
    EXPECT_NEAR(r.weights[0], 1.0f / (1.0f + std::exp(-1.0f)), 1e-6);
    EXPECT_NEAR(r.weights[1], 1.0f / (1.0f + std::exp(-0.3f)), 1e-6);
}

TEST(MoeRouter, BiasSteersTheChoiceButNotTheWeights) {
    const std::vector<float> logits{0.0f, 1.0f, 2.0f};
    const float bias[] = {5.0f, 0.0f, 0.0f};
    const Routed r = route({3, 2, ExpertGating::Sigmoid, false, bias}, logits);
    EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 2}));
    EXPECT_NEAR(r.weights[0], 0.5f, 1e-6);  // sigmoid(0), the bias left out
}

TEST(MoeRouter, TiesGoToTheLowerExpert) {
    const Routed r = route({6, 3, ExpertGating::Softmax, true, nullptr}, std::vector<float>(6, 0.25f));
    EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1, 2}));
    for (float w : r.weights) EXPECT_NEAR(w, 1.0f / 3, 1e-6);
}

TEST(MoeRouter, AllExpertsWhenKIsTheirCount) {
    const Routed r = route({4, 4, ExpertGating::Softmax, false, nullptr}, {3.0f, -1.0f, 0.0f, 1.0f});
    EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 3, 2, 1}));
}

TEST(MoeRouter, NanLogitsStillGiveDistinctValidExperts) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const std::vector<float>& logits : {std::vector<float>{nan, nan, nan, nan},
                                             std::vector<float>{nan, 1.0f, nan, 0.0f}}) {
        for (ExpertGating g : {ExpertGating::Softmax, ExpertGating::Sigmoid}) {
            const Routed r = route({4, 3, g, true, nullptr}, logits);
            const std::set<int32_t> distinct(r.experts.begin(), r.experts.end());
            EXPECT_EQ(distinct.size(), 3u);
            for (int32_t e : r.experts) EXPECT_TRUE(e >= 0 && e < 4);
        }
    }
}

}  // namespace
}  // namespace tessera
