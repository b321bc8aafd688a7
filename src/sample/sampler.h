// Turns one row of logits into one token for one sequence: the processor chain
// in llama.cpp's order plus a seeded random (or greedy) pick. One Sampler per
// sequence; it owns the token history for penalties and its own RNG.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sample/logits_processors.h"
#include "sample/sampling_params.h"

namespace tessera {

class Sampler {
public:
    // params must have passed params.validate(n_vocab) (checked again here).
    Sampler(SamplingParams params, int32_t n_vocab);

    // Chain: penalties (last penalty_last_n accepted tokens) -> logit bias ->
    // top-k -> typical -> top-p -> min-p -> temperature -> random pick.
    // Greedy (temperature <= 0): argmax after penalties and bias, lowest id on
    // ties. logits.size() must equal n_vocab. Does not record the token: call
    // accept() with whatever token the sequence actually takes.
    int32_t sample(std::span<const float> logits);

    // sample() for a drafter that samples its drafts: also writes the
    // chain's whole distribution to q (n_vocab entries, zero off the
    // candidates), the q that sample_speculative's rule needs. Greedy
    // parameters: the argmax, q its point mass.
    int32_t sample_with_distribution(std::span<const float> logits, std::span<float> q);

    // Speculative sampling's rule for a draft token drawn from q (spec/):
    // accept it with probability min(1, p(draft) / q(draft)), p the chain's
    // distribution over `logits`; otherwise draw from norm(max(0, p - q)),
    // which never yields `draft`. The token returned is distributed exactly
    // as sample()'s. Greedy parameters: sample() itself (a draft stands when
    // it is the argmax).
    int32_t sample_speculative(std::span<const float> logits, int32_t draft, std::span<const float> q);

    // Appends a token to the penalty history.
    void accept(int32_t token);

    // Forgets the history and re-seeds the RNG, so the sampler replays the
    // same sequence for the same logits.
    void reset();

    const SamplingParams& params() const { return params_; }

private:
    bool penalties_active() const;
    // Penalties and bias, then (unless greedy) the truncations and the
    // temperature, on candidates_.
    void run_chain(std::span<const float> logits);
    int32_t argmax(std::span<const float> logits) const;

    SamplingParams params_;
    int32_t n_vocab_;
    std::mt19937_64 rng_;
    Candidates candidates_;
    std::vector<int32_t> counts_;   // [n_vocab] scratch for penalties, all zero between calls
    std::vector<int32_t> history_;  // ring of the last penalty_last_n accepted tokens
    size_t history_next_ = 0;       // next slot to overwrite once history_ is full
};

// A row of logits can be sampled: no NaN, no +inf, at least one finite
// value. Corrupt weights (a model file overwritten in place, a NaN scale)
// produce such rows; callers end the sequence with this error rather than
// sample from them, since Sampler::sample requires a valid row.
Status check_logits(std::span<const float> logits);

// The k most likely tokens under log-softmax of the raw logits, best first
// (ties by lower id), as (token id, log probability). k is clamped to
// [0, logits.size()]. For the server's `logprobs`.
std::vector<std::pair<int32_t, float>> top_logprobs(std::span<const float> logits, int k);

// log-softmax of the raw logits at `token`, and the log of the partition sum.
float token_logprob(std::span<const float> logits, int32_t token);
double log_partition(std::span<const float> logits);

}  // namespace tessera
