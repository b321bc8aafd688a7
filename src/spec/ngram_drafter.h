// Prompt-lookup drafts (n-gram speculation): find the most recent earlier
// occurrence of the sequence's last n tokens, longest n first, and propose
// the tokens that followed it. No model: it pays on input-grounded outputs
// (editing, summarising with quotes, code fixes), where the answer copies
// long runs of the prompt.
#pragma once

#include "spec/drafter.h"

namespace tessera {

struct NgramOptions {
    int32_t min_n = 2;  // shortest suffix worth matching (1 matches too eagerly)
    int32_t max_n = 4;  // longest suffix tried first
};

class NgramDrafter final : public Drafter {
public:
    explicit NgramDrafter(NgramOptions options = {});
    const char* name() const override { return "ngram"; }
    void propose(std::span<DraftRequest> requests) override;

    // The draft for one token sequence (the function propose() applies).
    void draft(std::span<const int32_t> tokens, int32_t max_tokens, std::vector<int32_t>& out) const;

private:
    NgramOptions options_;
};

}  // namespace tessera
