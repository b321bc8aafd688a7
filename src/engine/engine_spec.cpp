// Speculative decoding inside the engine loop: how long a request's drafts
// may be, verifying a draft against the target's rows, and asking the
// drafter for the next drafts (spec/ holds the drafters themselves).
#include <algorithm>

#include "core/check.h"
#include "engine/engine_impl.h"
#include "sample/sampler.h"

namespace tessera {

int32_t Engine::Impl::max_draft_for(const GenerationRequest& r) const {
    if (!options_.spec.drafter || r.embed) return 0;
    return r.max_draft < 0 ? options_.spec.max_draft : std::min(r.max_draft, options_.spec.max_draft);
}

// Checks a draft against the target's logits rows (row i follows the run's
// i-th token): each row is sampled exactly as without speculation, and the
// draft is accepted while the sampled token equals it (spec/drafter.h: this
// is the rejection rule for deterministic drafts, so greedy output is
// identical and sampled output has the same distribution). The first
// mismatch is itself the next token; a fully accepted draft gains the last
// row's token as well.
void Engine::Impl::verify_draft(Choice& choice, const ScheduledRun& run, const float* rows) {
    const auto n_vocab = static_cast<size_t>(model_.config().n_vocab);
    const bool sampled_draft = !choice.draft_probs.empty();
    TS_CHECK(!sampled_draft || choice.draft_probs.size() >= static_cast<size_t>(run.n_draft) * n_vocab);
    int32_t accepted = 0;
    for (int32_t i = 0; i <= run.n_draft && !choice.done; ++i) {
        // Row i is sampled with drafted tokens 0..i-1 accepted: their K/V
        // counts before the token can end the choice and cache its blocks.
        if (i > 0) scheduler_.accept_drafted(&choice.seq, 1);
        const float* logits = rows + static_cast<size_t>(i) * n_vocab;
        Status valid = check_logits(std::span<const float>(logits, n_vocab));
        if (!valid.ok()) {
            finish(choice, FinishReason::Error, valid.message());
            break;
        }
        const bool drafted = i < run.n_draft;
        const int32_t draft = drafted ? choice.seq.draft[static_cast<size_t>(i)] : -1;
        const int32_t token = drafted && sampled_draft
                                  ? sample_token(choice, logits, draft, choice.draft_probs.data() + static_cast<size_t>(i) * n_vocab)
                                  : sample_token(choice, logits);
        if (!drafted || token != draft) break;
        ++accepted;
    }
    if (choice.draft_forced) {
        // A grammar's draft says nothing about the drafter's acceptance.
        metrics_.jump_forward_drafted_tokens.fetch_add(static_cast<uint64_t>(run.n_draft), std::memory_order_relaxed);
        metrics_.jump_forward_tokens.fetch_add(static_cast<uint64_t>(accepted), std::memory_order_relaxed);
        choice.forced_length.update(run.n_draft, accepted);
    } else {
        metrics_.spec_drafted_tokens.fetch_add(static_cast<uint64_t>(run.n_draft), std::memory_order_relaxed);
        metrics_.spec_accepted_tokens.fetch_add(static_cast<uint64_t>(accepted), std::memory_order_relaxed);
        metrics_.spec_accepted.observe(accepted);
        choice.draft_length.update(run.n_draft, accepted);
    }
    choice.draft_forced = false;
    choice.draft_probs.clear();
    scheduler_.end_draft(&choice.seq);
}

// Drafts for the choices that just sampled. A constrained choice whose
// grammar forces its next bytes drafts their tokens (jump-forward: they cost
// one verifying pass instead of a decode step each, and the model's own
// sampling still picks every token). The others ask the drafter, while the
// batch is small enough for speculation to pay (SpecOptions::max_batch). A
// draft never reaches past the choice's max_tokens or the context.
void Engine::Impl::propose_drafts() {
    const bool speculate =
        options_.spec.drafter && scheduler_.n_running() <= static_cast<size_t>(options_.spec.max_batch);
    if (!speculate && options_.spec.max_forced <= 0) return;
    draft_requests_.clear();
    drafts_.resize(sampled_.size());
    draft_probs_.resize(sampled_.size());
    for (size_t i = 0; i < sampled_.size(); ++i) {
        Choice& c = *sampled_[i];
        c.draft_probs.clear();  // a draft the scheduler dropped (preemption) leaves none behind
        if (c.done || c.seq.status != SeqStatus::Running || !c.pending_forks.empty()) continue;
        const auto len = static_cast<int64_t>(c.seq.tokens.size());
        const int64_t room = std::min<int64_t>(c.req->request.max_tokens - c.n_generated - 1, max_context_ - len);
        if (room <= 0) continue;
        if (c.constraint && options_.spec.max_forced > 0) {
            drafts_[i] = c.constraint->forced_tokens(
                static_cast<int32_t>(std::min<int64_t>(options_.spec.max_forced, room)));
            // The length control only steps where something is forced, so
            // its pauses and probes count forced stretches, not free text.
            if (!drafts_[i].empty()) drafts_[i].resize(static_cast<size_t>(std::min<int64_t>(
                                         c.forced_length.next(), static_cast<int64_t>(drafts_[i].size()))));
            c.draft_forced = !drafts_[i].empty();
            if (c.draft_forced) continue;
        }
        const auto k = static_cast<int32_t>(std::min<int64_t>(c.draft_length.next(), room));
        if (!speculate || k <= 0) continue;
        draft_requests_.push_back(
            DraftRequest{draft_key(c), c.seq.tokens, k, &drafts_[i], &c.sampler.params(), &draft_probs_[i]});
    }
    if (!draft_requests_.empty()) options_.spec.drafter->propose(draft_requests_);
    for (size_t i = 0; i < sampled_.size(); ++i) {
        if (!drafts_[i].empty()) {
            scheduler_.set_draft(&sampled_[i]->seq, std::move(drafts_[i]));
            std::swap(sampled_[i]->draft_probs, draft_probs_[i]);
        }
        drafts_[i].clear();
        draft_probs_[i].clear();
    }
}

}  // namespace tessera
