// Speculative decoding's drafters: each proposes up to k tokens that may
// follow a sequence, cheaply; the target model then checks them all in one
// forward pass (engine/, verification in the continuous batch). Drafts are
// deterministic (a point mass q), so accepting a draft token exactly when the
// target's own sampled token equals it is the standard rejection rule
// (accept with min(1, p/q) = p(d); on rejection draw from norm(max(0, p - q))
// = p without d): the output distribution is the target's, at every temperature.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// One sequence asking for a draft.
struct DraftRequest {
    uint64_t seq_id = 0;               // unique among live sequences, stable while one lives (Drafter::forget)
    std::span<const int32_t> tokens;   // prompt and every accepted token, the newest last
    int32_t max_tokens = 0;            // propose at most this many
    std::vector<int32_t>* out = nullptr;  // cleared, then filled with the draft (may stay empty)
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
