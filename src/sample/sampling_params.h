// User-facing sampling knobs for one request, with the checks that turn a bad
// request into an error message instead of a crash inside the sampler.
// Defaults follow llama.cpp's common sampling defaults.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tessera {

struct SamplingParams {
    float temperature = 0.8f;      // <= 0 means greedy (argmax)
    int32_t top_k = 40;            // 0 disables
    float top_p = 0.95f;           // 1 disables
    float min_p = 0.05f;           // 0 disables
    float typical_p = 1.0f;        // 1 disables
    float repeat_penalty = 1.0f;   // 1 disables
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    int32_t penalty_last_n = 64;   // window of accepted tokens; 0 disables
    std::vector<std::pair<int32_t, float>> logit_bias;  // (token id, additive bias)
    uint64_t seed = 0;

    // Checks every field against its range and every logit_bias token against
    // n_vocab. NaN anywhere is rejected; a bias of -inf (ban) is allowed, +inf
    // is not, and banning every token is an error.
    Status validate(int32_t n_vocab) const;

    bool greedy() const { return temperature <= 0.0f; }
};

}  // namespace tessera
