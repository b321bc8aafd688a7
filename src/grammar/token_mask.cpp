// The mask walk over the sorted vocabulary: the matcher holds the bytes of the
// current token but its last; moving to the next token rolls back to the
// shared prefix and feeds the rest, and a rejected byte skips all tokens that
// share it.
#include "grammar/token_mask.h"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "grammar/token_mask_tables.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> eos_ids)
    : bytes_(std::move(token_bytes)), eos_ids_(std::move(eos_ids)), tables_(std::make_shared<TablesRegistry>()) {
    for (size_t i = 0; i < bytes_.size(); ++i) {
        // 65535 bytes bound the shared-prefix width; no real token comes near.
        if (!bytes_[i].empty() && bytes_[i].size() < 65535) {
            sorted_.push_back(static_cast<int32_t>(i));
            max_token_bytes_ = std::max(max_token_bytes_, bytes_[i].size());
        }
    }
    std::sort(sorted_.begin(), sorted_.end(), [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b]; });
    lcp_.resize(sorted_.size(), 0);
    for (size_t i = 1; i < sorted_.size(); ++i) {
        const std::string& a = bytes_[sorted_[i - 1]];
        const std::string& b = bytes_[sorted_[i]];
        const auto mm = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
        lcp_[i] = static_cast<uint16_t>(mm.first - a.begin());
    }
}

struct TokenVocabulary::TablesRegistry {
    std::mutex mu;
    std::unordered_map<const Grammar*, std::weak_ptr<TokenMaskTables>> tables;
};

std::shared_ptr<TokenMaskTables> TokenVocabulary::shared_tables(const std::shared_ptr<const Grammar>& grammar) const {
    std::lock_guard<std::mutex> lock(tables_->mu);
    auto& slot = tables_->tables[grammar.get()];
    // The grammar cannot have been freed and its address reused while its
    // tables live (they hold it); a copy of this vocabulary has its own.
    std::shared_ptr<TokenMaskTables> t = slot.lock();
    if (t && t->grammar() == grammar && &t->vocab() == this) return t;
    t = std::make_shared<TokenMaskTables>(grammar, *this);
    slot = t;
    std::erase_if(tables_->tables, [](const auto& e) { return e.second.expired(); });
    return t;
}

TokenVocabulary TokenVocabulary::from_tokenizer(const Tokenizer& tokenizer) {
    std::vector<std::string> bytes(static_cast<size_t>(tokenizer.n_vocab()));
    std::vector<int32_t> eos;
    for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
        bytes[static_cast<size_t>(id)] = tokenizer.token_to_piece(id);
        if (tokenizer.is_eog(id)) eos.push_back(id);
    }
    return TokenVocabulary(std::move(bytes), std::move(eos));
}

void compute_token_mask(GrammarMatcher& matcher, const TokenVocabulary& vocab, TokenMask& out) {
    out.assign((static_cast<size_t>(vocab.n_tokens()) + 63) / 64, 0);
    const auto set = [&](int32_t id) { out[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63); };
    if (matcher.accepting()) {
        for (int32_t id : vocab.eos_ids()) set(id);
    }
    const auto& sorted = vocab.sorted();
    const auto& lcp = vocab.shared_prefix();
    size_t depth = 0;  // bytes of the current token fed to the matcher
    size_t i = 0;
    while (i < sorted.size()) {
        if (depth > lcp[i]) {
            matcher.rollback(depth - lcp[i]);
            depth = lcp[i];
        }
        // A token's last byte is only looked up in the allowed set, not fed:
        // a following token that extends this one feeds it then.
        const std::string& bytes = vocab.bytes(sorted[i]);
        const size_t last = bytes.size() - 1;
        while (depth < last && matcher.advance(static_cast<uint8_t>(bytes[depth]))) ++depth;
        if (depth == last && matcher.allowed_bytes().has(static_cast<uint8_t>(bytes[last]))) {
            set(sorted[i]);
            ++i;
            continue;
        }
        // bytes[depth] was rejected: so is every following token sharing bytes[0..depth].
        for (++i; i < sorted.size() && lcp[i] > depth; ++i) {
        }
    }
    matcher.rollback(depth);
}

void TokenMaskCache::compute(GrammarMatcher& matcher, const TokenVocabulary& vocab, TokenMask& out) {
    if (!tables_ || tables_->grammar() != matcher.grammar_ptr() || &tables_->vocab() != &vocab) {
        tables_ = vocab.shared_tables(matcher.grammar_ptr());
    }
    compute(matcher, *tables_, out);
}

void TokenMaskCache::compute(GrammarMatcher& matcher, TokenMaskTables& tables, TokenMask& out) {
    if (owner_ != matcher.lineage()) {
        entries_.clear();
        owner_ = matcher.lineage();
    }
    matcher.state_key(key_);
    for (size_t i = entries_.size(); i-- > 0;) {
        if (entries_[i].key != key_) continue;
        out = entries_[i].mask;
        std::rotate(entries_.begin() + static_cast<long>(i), entries_.begin() + static_cast<long>(i) + 1, entries_.end());
        ++hits_;
        return;
    }
    ++misses_;
    tables.compute(matcher, out);
    if (capacity_ == 0) return;
    if (entries_.size() == capacity_) entries_.erase(entries_.begin());
    entries_.push_back({key_, out});
}

}  // namespace tessera
