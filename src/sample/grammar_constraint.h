// One sequence's grammar state while it decodes: which tokens the grammar
// allows next (as a mask applied to the logits before the sampling chain),
// and the advance by each chosen token's bytes. One per constrained choice;
// the grammar and the vocabulary are shared, read only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/token_mask.h"
#include "grammar/token_mask_tables.h"

namespace tessera {

// A control token the grammar may emit as its text: masks never allow
// tokens without bytes (grammar/token_mask.h), but a tool-call family's
// marker, such as Mistral's [TOOL_CALLS], is a control token in the model's
// vocabulary and the one the model was trained to write.
struct MarkerToken {
    int32_t id;
    std::string text;
};

class GrammarConstraint {
public:
    // `tables`: the grammar's, over `vocab`, shared across sequences; null:
    // the vocabulary's shared_tables(), built lazily. `markers`: allowed
    // wherever the grammar admits their whole text next (spelling that text
    // in ordinary tokens stays allowed too).
    GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocab,
                      std::shared_ptr<TokenMaskTables> tables = nullptr, std::vector<MarkerToken> markers = {});

    // The logits with every token the grammar forbids set to -inf (the end-
    // of-generation tokens allowed only where the grammar accepts), in a
    // buffer this object owns until the next call. Empty when the grammar
    // allows no token the vocabulary has, or every allowed one is -inf.
    // logits.size() must equal the vocabulary's size.
    std::span<const float> mask(std::span<const float> logits);

    // Computes the allowed set for the current state ahead of mask(), which
    // then only applies it to the logits: the set depends on the grammar
    // state alone, so the engine computes it on its mask thread while the
    // forward pass that makes the logits runs. accept() drops it.
    void prepare();
    // Seconds the last mask() took, its prepare() included wherever that ran.
    double last_mask_seconds() const { return last_mask_seconds_; }

    // Advances by the token's bytes (a marker's text; none for an
    // end-of-generation token);
    // false, state unchanged, when the grammar rejects them.
    bool accept(int32_t token);

    // Jump-forward: the tokens of the continuation the grammar forces from
    // here (grammar/forced.h), at most max_tokens; empty where the next byte
    // is a choice or the output may end. A marker's text is drafted as the
    // marker: alone when the continuation starts with it, else the draft
    // stops before it.
    std::vector<int32_t> forced_tokens(int32_t max_tokens);

    // The output so far is a whole match and nothing may follow it.
    bool complete() const { return matcher_.accepting() && matcher_.finished(); }
    bool is_end_token(int32_t token) const;

    const TokenMaskCache& cache() const { return cache_; }

private:
    const MarkerToken* marker(int32_t token) const;  // null when `token` is no marker

    GrammarMatcher matcher_;
    std::shared_ptr<const TokenVocabulary> vocab_;
    std::vector<MarkerToken> markers_;
    std::shared_ptr<TokenMaskTables> tables_;
    TokenMaskCache cache_;
    TokenMask allowed_;
    bool prepared_ = false;           // allowed_ is the current state's
    double prepare_seconds_ = 0.0;    // of the prepare() that made allowed_
    double last_mask_seconds_ = 0.0;
    std::vector<float> masked_;  // [n_vocab]
};

}  // namespace tessera
