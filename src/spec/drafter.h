// Speculative decoding's drafters: each proposes up to k tokens that may
// follow a sequence, cheaply; the target model then checks them all in one
// forward pass (engine/, verification in the continuous batch), with the
// standard rejection rule: accept a draft token d drawn from q with
// probability min(1, p(d)/q(d)), on rejection draw from norm(max(0, p - q)),
// so the output distribution is the target's p at every temperature.
// A deterministic draft (a point mass q: n-gram lookup, greedy drafts) makes
// that rule "sample from p, keep the draft while the sample equals it", which
// draws exactly the random numbers plain decoding draws. A drafter that
// samples (the draft model at temperature > 0) returns its q per token, and
// Sampler::sample_speculative applies the rule in full: far more of its
// drafts survive, but a seed no longer replays plain decoding's tokens.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sample/sampling_params.h"

namespace tessera {

// One sequence asking for a draft.
struct DraftRequest {
    uint64_t seq_id = 0;               // unique among live sequences, stable while one lives (Drafter::forget)
    std::span<const int32_t> tokens;   // prompt and every accepted token, the newest last
    int32_t max_tokens = 0;            // propose at most this many
    std::vector<int32_t>* out = nullptr;  // cleared, then filled with the draft (may stay empty)
    // The sequence's sampling chain. A drafter that samples draws from it
    // (without penalties) when it is not greedy, and then fills `probs`.
    const SamplingParams* sampling = nullptr;
    // Arrives empty; a sampling drafter writes its q for each drafted token
    // (n_vocab entries each, in draft order). Left empty: a point-mass draft.
    std::vector<float>* probs = nullptr;
};

class Drafter {
public:
    virtual ~Drafter() = default;
    virtual const char* name() const = 0;  // metric label: "ngram", "draft_model"
    // Fills every request's draft. Batched: a model drafter runs all of them
    // through one forward pass per drafted position.
    virtual void propose(std::span<DraftRequest> requests) = 0;
    // The sequence ended; drop whatever state the drafter kept for it.
    virtual void forget(uint64_t seq_id) { (void)seq_id; }
    // Weight bytes one drafted token reads (0 for a lookup): with the
    // target's, what a drafted token costs next to a decode step (DraftLength).
    virtual uint64_t weight_bytes() const { return 0; }
};

}  // namespace tessera
