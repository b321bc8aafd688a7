// RoPE angles per dimension pair, with YaRN's ramp between interpolated and
// extrapolated frequencies (derived from the YaRN paper's definitions).
#include "kernels/rope.h"

#include <algorithm>
#include <cmath>

namespace tessera {
namespace {

constexpr float kPi = 3.14159265358979323846f;

// Dimension index at which the wavelength equals n_ctx_orig / n_rotations.
float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rotations, float base) {
    return n_dims * std::log(static_cast<float>(n_ctx_orig) / (n_rotations * 2.0f * kPi)) /
           (2.0f * std::log(base));
}

float yarn_ramp(float low, float high, int i0) {
    const float y = (static_cast<float>(i0) / 2.0f - low) / std::max(0.001f, high - low);
    return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void rope_table(const RopeParams& p, int64_t pos, RopeTable& out) {
    const int half = p.n_rot / 2;
    out.cos.resize(half);
    out.sin.resize(half);
    float corr_low = 0.0f, corr_high = 0.0f;
    if (p.ext_factor != 0.0f) {
        corr_low = yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base);
        corr_high = yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base);
        if (p.yarn_truncate) {
            corr_low = std::floor(corr_low);
            corr_high = std::ceil(corr_high);
        }
        corr_low = std::max(0.0f, corr_low);
        corr_high = std::min(static_cast<float>(p.n_rot - 1), corr_high);
    }
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    float theta_extrap = static_cast<float>(pos);
    for (int i = 0; i < half; ++i) {
        const float factor = p.freq_factors.empty() ? 1.0f : p.freq_factors[i];
        const float extrap = theta_extrap / factor;
        const float interp = p.freq_scale * extrap;
        float theta = interp;
        float mscale = p.attn_factor;
        if (p.ext_factor != 0.0f) {
            const float mix = yarn_ramp(corr_low, corr_high, 2 * i) * p.ext_factor;
            theta = interp * (1.0f - mix) + extrap * mix;
            mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
        }
        out.cos[i] = std::cos(theta) * mscale;
        out.sin[i] = std::sin(theta) * mscale;
        theta_extrap *= theta_scale;
    }
}

void rope_apply(const RopeParams& p, const RopeTable& t, float* x, int n_heads, int head_dim) {
    const int half = p.n_rot / 2;
    for (int h = 0; h < n_heads; ++h) {
        float* v = x + static_cast<int64_t>(h) * head_dim;
        for (int i = 0; i < half; ++i) {
            const int a = p.style == RopeStyle::Normal ? 2 * i : i;
            const int b = p.style == RopeStyle::Normal ? 2 * i + 1 : i + half;
            const float x0 = v[a], x1 = v[b];
            v[a] = x0 * t.cos[i] - x1 * t.sin[i];
            v[b] = x0 * t.sin[i] + x1 * t.cos[i];
        }
    }
}

}  // namespace tessera
