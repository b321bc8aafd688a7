// Per-choice output state on the engine thread: the sampler, incremental
// detokenizer and stop-string matcher of one sequence, plus its timing.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "engine/request.h"
#include "engine/request_handle.h"
#include "model/pooling.h"
#include "sample/grammar_constraint.h"
#include "sample/sampler.h"
#include "sample/stop_strings.h"
#include "sched/sequence.h"
#include "spec/draft_length.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct RequestState {
    GenerationRequest request;
    std::shared_ptr<RequestHandle> handle;
    std::chrono::steady_clock::time_point submitted;
};

struct Choice {
    // `vocab`: the model's grammar vocabulary; needed (non-null) only when
    // the request carries a constraint.
    // `draft`: the choice's speculative draft length control (its max 0: none);
    // `forced`: the same for its grammar's forced drafts (jump-forward).
    Choice(std::shared_ptr<RequestState> r, int32_t idx, const Tokenizer& tok, int32_t n_vocab,
           const std::shared_ptr<const TokenVocabulary>& vocab, DraftLength draft, DraftLength forced)
        : req(std::move(r)), index(idx), sampler(seeded(req->request.sampling, idx), n_vocab),
          stops(req->request.stop),
          // Only markers and end tokens pass a grammar's mask among the control tokens.
          detok(tok, {.render_special = !req->request.constraint.marker_tokens.empty()}), draft_length(draft),
          forced_length(forced) {
        const GenerationConstraint& c = req->request.constraint;
        if (!c) return;
        std::vector<MarkerToken> markers;
        for (int32_t id : c.marker_tokens) markers.push_back({id, tok.token_to_piece(id, {.render_special = true})});
        constraint.emplace(c.grammar, vocab, c.tables, std::move(markers));
    }

    std::shared_ptr<RequestState> req;
    int32_t index;
    Sequence seq;
    Sampler sampler;
    StopStringMatcher stops;
    IncrementalDetokenizer detok;
    std::optional<GrammarConstraint> constraint;         // this choice's own matcher and mask cache
    DraftLength draft_length;                            // follows this choice's acceptance
    // Forced drafts are verified like any other: a model that splits the
    // forced bytes into other tokens than the draft rejects it, and each
    // verified position costs (kVerifyPositionCost), so their length follows
    // their acceptance too.
    DraftLength forced_length;
    bool draft_forced = false;                           // the pending draft is a grammar's forced tokens
    std::vector<float> draft_probs;                      // a sampled draft's q per token (n_vocab each); empty: point masses
    std::vector<std::unique_ptr<Choice>> pending_forks;  // choices 1..n-1 until choice 0's prefill is done
    int32_t n_generated = 0;
    std::vector<int32_t> unsent_tokens;                  // tokens whose text is still held back
    std::vector<TokenLogprob> unsent_logprobs;
    std::chrono::steady_clock::time_point first_token;
    std::chrono::steady_clock::time_point last_token;
    std::unique_ptr<PoolingAccumulator> pooled;          // set for an embedding request
    bool done = false;

private:
    // Choices of one request draw from different random streams.
    static SamplingParams seeded(SamplingParams p, int32_t idx) {
        p.seed += static_cast<uint64_t>(idx);
        return p;
    }
};

}  // namespace tessera
