// YaRN's angles against Hugging Face's definition (_compute_yarn_parameters,
// written out in double here) with gpt-oss's parameters, with the ramp's ends
// rounded to whole dimensions (llama.cpp; Hugging Face's default) and not
// (gpt-oss's "truncate": false), and the two told apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/rope.h"

namespace tessera {
namespace {

constexpr double kPi = 3.14159265358979323846;

RopeParams gpt_oss_rope(bool truncate) {
    RopeParams p;
    p.style = RopeStyle::Neox;
    p.n_rot = 64;
    p.freq_base = 150000.0f;
    p.freq_scale = 1.0f / 32.0f;
    p.ext_factor = 1.0f;
    p.n_ctx_orig = 4096;
    p.yarn_truncate = truncate;
    return p;
}

// cos of each pair's angle at pos, times YaRN's magnitude, as Hugging Face computes it.
std::vector<double> hf_cos(const RopeParams& p, int64_t pos) {
    const double dim = p.n_rot, base = p.freq_base, factor = 1.0 / p.freq_scale;
    auto corr_dim = [&](double rotations) {
        return dim * std::log(p.n_ctx_orig / (rotations * 2 * kPi)) / (2 * std::log(base));
    };
    double low = corr_dim(p.beta_fast), high = corr_dim(p.beta_slow);
    if (p.yarn_truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dim - 1);
    std::vector<double> out;
    for (int i = 0; i < p.n_rot / 2; ++i) {
        const double extrap = 1.0 / std::pow(base, 2.0 * i / dim), interp = extrap / factor;
        const double keep = 1.0 - std::clamp((i - low) / (high - low), 0.0, 1.0);  // extrapolated share
        const double inv_freq = interp * (1 - keep) + extrap * keep;
        out.push_back(std::cos(pos * inv_freq) * (0.1 * std::log(factor) + 1.0));
    }
    return out;
}

TEST(RopeYarn, MatchesHuggingFaceWithAndWithoutRounding) {
    for (bool truncate : {true, false}) {
        const RopeParams p = gpt_oss_rope(truncate);
        for (int64_t pos : {1, 7, 100}) {
            RopeTable t;
            rope_table(p, pos, t);
            const std::vector<double> want = hf_cos(p, pos);
            for (int i = 0; i < p.n_rot / 2; ++i) {
                ASSERT_NEAR(t.cos[i], want[i], 1e-4) << "truncate " << truncate << " pos " << pos << " pair " << i;
            }
        }
    }
}

TEST(RopeYarn, RoundingTheRampChangesTheAngles) {
    RopeTable rounded, exact;
    rope_table(gpt_oss_rope(true), 100, rounded);
    rope_table(gpt_oss_rope(false), 100, exact);
    double max_diff = 0;
    for (size_t i = 0; i < exact.cos.size(); ++i) {
        max_diff = std::max<double>(max_diff, std::fabs(exact.cos[i] - rounded.cos[i]));
    }
    EXPECT_GT(max_diff, 0.01);  // 100 times the tolerance above
}

}  // namespace
}  // namespace tessera
