// Grammar masks over logits and the matcher's advance by token bytes.
#include "sample/grammar_constraint.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "grammar/forced.h"

namespace tessera {

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                                     std::shared_ptr<const TokenVocabulary> vocab,
                                     std::shared_ptr<TokenMaskTables> tables, std::vector<MarkerToken> markers)
    : matcher_(grammar), vocab_(std::move(vocab)), markers_(std::move(markers)), tables_(std::move(tables)) {
    TS_CHECK(vocab_ != nullptr);
    if (!tables_) tables_ = vocab_->shared_tables(grammar);
    TS_CHECK(tables_->grammar() == grammar && &tables_->vocab() == vocab_.get());
    for (const MarkerToken& m : markers_) TS_CHECK(m.id >= 0 && m.id < vocab_->n_tokens() && !m.text.empty());
}

const MarkerToken* GrammarConstraint::marker(int32_t token) const {
    for (const MarkerToken& m : markers_) {
        if (m.id == token) return &m;
    }
    return nullptr;
}

void GrammarConstraint::prepare() {
    const auto start = std::chrono::steady_clock::now();
    cache_.compute(matcher_, *tables_, allowed_);
    for (const MarkerToken& m : markers_) {  // a few, each tried on the live matcher and rolled back
        if (!matcher_.advance(m.text)) continue;
        matcher_.rollback(m.text.size());
        allowed_[static_cast<size_t>(m.id) >> 6] |= uint64_t{1} << (m.id & 63);
    }
    prepared_ = true;
    prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::span<const float> GrammarConstraint::mask(std::span<const float> logits) {
    const auto n = static_cast<size_t>(vocab_->n_tokens());
    TS_CHECK(logits.size() == n);
    const auto start = std::chrono::steady_clock::now();
    const bool ahead = prepared_;
    if (!prepared_) prepare();
    masked_.assign(n, -std::numeric_limits<float>::infinity());
    bool any = false;
    // Word by word: most words of a mask are all zero or all one.
    for (size_t w = 0; w < allowed_.size(); ++w) {
        uint64_t bits = allowed_[w];
        while (bits != 0) {
            const size_t id = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            masked_[id] = logits[id];
            any = any || logits[id] != -std::numeric_limits<float>::infinity();
        }
    }
    // A prepare() made here is in the time since `start`; one made ahead is added.
    last_mask_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() +
                         (ahead ? prepare_seconds_ : 0.0);
    if (!any) return {};
    return masked_;
}

bool GrammarConstraint::accept(int32_t token) {
    TS_CHECK(token >= 0 && token < vocab_->n_tokens());
    prepared_ = false;
    if (is_end_token(token)) return matcher_.accepting();
    if (const MarkerToken* m = marker(token)) return matcher_.advance(m->text);
    const std::string& bytes = vocab_->bytes(token);
    return !bytes.empty() && matcher_.advance(bytes);
}

std::vector<int32_t> GrammarConstraint::forced_tokens(int32_t max_tokens) {
    if (max_tokens <= 0) return {};
    // Tokens seldom pass 16 bytes: 16 a token bounds the walk without
    // cutting a draft short.
    std::string bytes = forced_bytes(matcher_, static_cast<size_t>(max_tokens) * 16);
    size_t cut = bytes.size();
    for (const MarkerToken& m : markers_) {
        const size_t at = bytes.find(m.text);
        if (at == 0) return {m.id};
        cut = std::min(cut, at);
    }
    bytes.resize(cut);
    return split_longest_first(*vocab_, bytes, static_cast<size_t>(max_tokens));
}

bool GrammarConstraint::is_end_token(int32_t token) const {
    const auto& ends = vocab_->eos_ids();
    return std::find(ends.begin(), ends.end(), token) != ends.end();
}

}  // namespace tessera
