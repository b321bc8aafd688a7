// DraftModelDrafter: catch up each sequence's draft-side K/V to the target's
// accepted tokens, then draft (greedy, or sampled with q), all sequences in
// one batch per step.
#include "spec/draft_model_drafter.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {
namespace {

int32_t argmax(const float* row, int32_t n) {
    return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

// The draft side's chain: the sequence's own, without penalties (the draft
// keeps no token history; any q is exact, this one is merely close to p),
// on a random stream apart from the target's.
SamplingParams draft_chain(SamplingParams p) {
    p.repeat_penalty = 1.0f;
    p.frequency_penalty = 0.0f;
    p.presence_penalty = 0.0f;
    p.seed ^= 0x9e3779b97f4a7c15ULL;
    return p;
}

}  // namespace

std::string vocabulary_mismatch(const Tokenizer& draft, const Tokenizer& target) {
    if (draft.n_vocab() != target.n_vocab()) {
        return "the draft model has " + std::to_string(draft.n_vocab()) + " tokens, the target " +
               std::to_string(target.n_vocab());
    }
    for (int32_t id = 0; id < target.n_vocab(); ++id) {
        if (draft.token_text(id) != target.token_text(id)) {
            return "token " + std::to_string(id) + " is '" + draft.token_text(id) + "' in the draft model, '" +
                   target.token_text(id) + "' in the target";
        }
    }
    return {};
}

Expected<std::unique_ptr<DraftModelDrafter>> DraftModelDrafter::load(const std::string& path, const Tokenizer& target,
                                                                     DraftModelOptions options) {
    auto model = Model::load(path);
    if (!model) return Status::error("draft model: " + model.error());
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    if (!tokenizer) return Status::error("draft model: " + tokenizer.error());
    const std::string mismatch = vocabulary_mismatch(*tokenizer, target);
    if (!mismatch.empty()) return Status::error("the draft model's vocabulary differs from the target's: " + mismatch);
    if ((*model)->config().n_vocab != target.n_vocab()) {
        return Status::error("the draft model's output has " + std::to_string((*model)->config().n_vocab) +
                             " logits per token; the vocabulary has " + std::to_string(target.n_vocab()));
    }
    TS_RETURN_IF_ERROR(check_kv_types(options.kv_types, (*model)->config().head_dim));
    if (options.block_size < 1 || options.kv_tokens < options.block_size || options.prefill_chunk < 1) {
        return Status::error("draft model: bad KV or chunk size");
    }
    return std::unique_ptr<DraftModelDrafter>(new DraftModelDrafter(std::move(*model), options));
}

DraftModelDrafter::DraftModelDrafter(std::unique_ptr<Model> model, DraftModelOptions options)
    : model_(std::move(model)), options_(options),
      cache_(model_->make_kv_cache(options.kv_tokens, options.kv_types, options.block_size)),
      pool_(std::max(1, options.threads)) {}

DraftModelDrafter::~DraftModelDrafter() {
    for (auto& [id, seq] : seqs_) release(seq);
}

void DraftModelDrafter::forget(uint64_t seq_id) {
    auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) return;
    release(it->second);
    seqs_.erase(it);
}

void DraftModelDrafter::release(DraftSeq& seq) {
    for (int32_t slot : seq.block_table) cache_.blocks().unref(slot / cache_.block_size());
    seq.block_table.clear();
    seq.tokens.clear();
}

bool DraftModelDrafter::reserve(DraftSeq& seq, int64_t positions) {
    const int bs = cache_.block_size();
    while (static_cast<int64_t>(seq.block_table.size()) * bs < positions) {
        const int32_t b = cache_.blocks().allocate();
        if (b < 0) return false;
        seq.block_table.push_back(b * bs);
    }
    return true;
}

void DraftModelDrafter::propose(std::span<DraftRequest> requests) {
    std::vector<Active> active;
    active.reserve(requests.size());
    for (DraftRequest& r : requests) {
        r.out->clear();
        if (r.max_tokens <= 0 || r.tokens.empty()) continue;
        DraftSeq& seq = seqs_[r.seq_id];
        // K/V past the common prefix belongs to rejected drafts: recompute from
        // there. The newest token always runs, for the logits of the next one.
        const auto common = static_cast<size_t>(
            std::mismatch(seq.tokens.begin(), seq.tokens.end(), r.tokens.begin(), r.tokens.end()).first -
            seq.tokens.begin());
        seq.tokens.resize(std::min(common, r.tokens.size() - 1));
        // Room for the catch-up and for every drafted token but the last.
        if (!reserve(seq, static_cast<int64_t>(r.tokens.size()) + r.max_tokens - 1)) {
            forget(r.seq_id);  // no KV to spare: no draft this time, a fresh start next time
            continue;
        }
        if (r.sampling && !r.sampling->greedy() && r.probs && !seq.sampler) {
            seq.sampler.emplace(draft_chain(*r.sampling), model_->config().n_vocab);
        }
        active.push_back({&r, &seq, r.tokens.subspan(seq.tokens.size())});
    }
    for (int32_t step = 0; !active.empty(); ++step) {
        if (!run(active).ok()) return;  // drafts so far stand; a draft is only ever a proposal
        const auto n_vocab = static_cast<size_t>(model_->config().n_vocab);
        std::vector<Active> still;
        for (size_t i = 0; i < active.size(); ++i) {
            Active& a = active[i];
            const int32_t token = next_token(a, logits_.data() + i * n_vocab);
            if (token < 0) continue;
            a.request->out->push_back(token);
            if (static_cast<int32_t>(a.request->out->size()) < a.request->max_tokens) still.push_back(a);
        }
        active = std::move(still);
        for (Active& a : active) a.pending = std::span<const int32_t>(&a.request->out->back(), 1);
    }
}

int32_t DraftModelDrafter::next_token(Active& a, const float* row) {
    const int32_t n_vocab = model_->config().n_vocab;
    if (!a.seq->sampler || !a.request->probs) return argmax(row, n_vocab);
    const std::span<const float> logits(row, static_cast<size_t>(n_vocab));
    if (!check_logits(logits).ok()) return -1;  // the sampler refuses such a row; the target never sees it
    std::vector<float>& probs = *a.request->probs;
    probs.resize(probs.size() + static_cast<size_t>(n_vocab));
    return a.seq->sampler->sample_with_distribution(logits, std::span<float>(probs).last(static_cast<size_t>(n_vocab)));
}

Status DraftModelDrafter::run(std::vector<Active>& active) {
    const auto chunk = static_cast<size_t>(options_.prefill_chunk);
    // Long catch-ups first, a chunk at a time without logits; then one pass
    // runs every sequence's rest (at least its newest token), so logits_ has
    // exactly one row per active sequence, in order.
    for (bool final_pass = false; !final_pass;) {
        final_pass = std::all_of(active.begin(), active.end(), [&](const Active& a) { return a.pending.size() <= chunk; });
        batch_.clear();
        for (Active& a : active) {
            TS_CHECK(!a.pending.empty());
            if (!final_pass && a.pending.size() <= chunk) continue;
            batch_.add(a.seq->block_table.data(), static_cast<int64_t>(a.seq->tokens.size()),
                       a.pending.first(std::min(a.pending.size(), chunk)), final_pass);
        }
        Status st = model_->forward_batch(batch_, cache_, logits_, pool_);
        if (!st.ok()) return st;
        for (Active& a : active) {
            if (!final_pass && a.pending.size() <= chunk) continue;
            const size_t n = std::min(a.pending.size(), chunk);
            a.seq->tokens.insert(a.seq->tokens.end(), a.pending.begin(), a.pending.begin() + static_cast<long>(n));
            a.pending = a.pending.subspan(n);
        }
    }
    return {};
}

}  // namespace tessera
