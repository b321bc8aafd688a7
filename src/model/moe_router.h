// The router of a mixture-of-experts layer: from one token's router logits
// (ffn_gate_inp · x) it picks the top-k experts and the weight each one's
// output gets. Softmax (qwen, olmoe, mixtral) or sigmoid (deepseek-v3
// style) gating; an optional per-expert bias that steers the choice only
// (exp_probs_b: the weights stay the unbiased probabilities); an optional
// renormalisation of the k weights to sum to one (norm_topk_prob).
#pragma once

#include <cstdint>
#include <span>

namespace tessera {

enum class ExpertGating { Softmax, Sigmoid };

struct RouterParams {
    int32_t n_expert = 0;
    int32_t k = 0;  // experts used per token, 1..n_expert
    ExpertGating gating = ExpertGating::Softmax;
    bool renormalize = false;
    const float* bias = nullptr;  // [n_expert] added to the scores for selection only, or null
};

// Picks the k experts of one token. logits: [n_expert]. scratch: at least
// 2 * n_expert floats. Writes experts[0..k) (best first; an equal score goes
// to the lower expert id, so the choice never depends on anything but the
// logits) and their weights[0..k).
void route_token(const RouterParams& p, const float* logits, std::span<float> scratch, int32_t* experts,
                 float* weights);

}  // namespace tessera
