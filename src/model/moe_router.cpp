// Top-k by repeated arg-max: k is small (2..8) next to n_expert (8..256),
// and a linear scan keeps the tie rule (lowest id first) obvious.
#include "model/moe_router.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace tessera {

void route_token(const RouterParams& p, const float* logits, std::span<float> scratch, int32_t* experts,
                 float* weights) {
    const int32_t n = p.n_expert;
    TS_CHECK(p.k >= 1 && p.k <= n && scratch.size() >= 2 * static_cast<size_t>(n));
    float* prob = scratch.data();
    float* score = scratch.data() + n;
    if (p.gating == ExpertGating::Softmax) {
        float max = logits[0];
        for (int32_t e = 1; e < n; ++e) max = std::max(max, logits[e]);
        float sum = 0;
        for (int32_t e = 0; e < n; ++e) {
            prob[e] = std::exp(logits[e] - max);
            sum += prob[e];
        }
        for (int32_t e = 0; e < n; ++e) prob[e] /= sum;
    } else {
        for (int32_t e = 0; e < n; ++e) prob[e] = 1.0f / (1.0f + std::exp(-logits[e]));
    }
    // NaN marks an expert as taken below, so a NaN score (a broken model)
    // becomes -inf: chosen last, but still a valid expert id.
    for (int32_t e = 0; e < n; ++e) {
        score[e] = p.bias ? prob[e] + p.bias[e] : prob[e];
        if (std::isnan(score[e])) score[e] = -std::numeric_limits<float>::infinity();
    }
    float total = 0;
    for (int32_t j = 0; j < p.k; ++j) {
        int32_t best = -1;
        for (int32_t e = 0; e < n; ++e) {
            if (!std::isnan(score[e]) && (best < 0 || score[e] > score[best])) best = e;
        }
        experts[j] = best;
        weights[j] = prob[best];
        total += prob[best];
        score[best] = std::numeric_limits<float>::quiet_NaN();  // taken
    }
    if (p.renormalize && total > 0) {
        for (int32_t j = 0; j < p.k; ++j) weights[j] /= total;
    }
}

}  // namespace tessera
