// Token masks: which vocabulary tokens a grammar allows next. The tokens'
// bytes are sorted once per vocabulary so a walk shares each common prefix
// (a byte trie laid out flat); the walk feeds the matcher byte by byte and
// skips every token under a rejected prefix.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/matcher.h"

namespace tessera {

class Tokenizer;
class TokenMaskTables;

// The vocabulary as the mask sees it: each token's bytes, and the end-of-
// sequence tokens (allowed only where the grammar accepts). Tokens with no
// bytes (control and other special tokens) are never allowed.
class TokenVocabulary {
public:
    TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> eos_ids);
    // Bytes from Tokenizer::token_to_piece; eos_ids: every end-of-generation token.
    static TokenVocabulary from_tokenizer(const Tokenizer& tokenizer);

    int32_t n_tokens() const { return static_cast<int32_t>(bytes_.size()); }
    const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
    const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
    // Token ids with bytes, in byte order, and each one's common prefix length
    // with the one before.
    const std::vector<int32_t>& sorted() const { return sorted_; }
    const std::vector<uint16_t>& shared_prefix() const { return lcp_; }
    size_t max_token_bytes() const { return max_token_bytes_; }  // longest token in sorted()

    // The token tables of `grammar` over this vocabulary, shared by every
    // caller while one holds them, so the sequences of one grammar build
    // each position's table once (TokenMaskCache's vocabulary overload uses
    // them). Thread-safe.
    std::shared_ptr<TokenMaskTables> shared_tables(const std::shared_ptr<const Grammar>& grammar) const;

private:
    std::vector<std::string> bytes_;
    std::vector<int32_t> eos_ids_;
    std::vector<int32_t> sorted_;
    std::vector<uint16_t> lcp_;
    size_t max_token_bytes_ = 0;
    struct TablesRegistry;
    std::shared_ptr<TablesRegistry> tables_;  // shared by copies, which check the tables' vocabulary
};

// A bitset over token ids: bit (id % 64) of word id / 64.
using TokenMask = std::vector<uint64_t>;

inline bool mask_has(const TokenMask& m, int32_t id) { return (m[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1; }

// The tokens allowed after the matcher's input, by walking the whole
// vocabulary trie (no tables: the reference TokenMaskTables must equal, and
// the way to a single mask of a grammar seen once). The matcher is used as
// scratch and left as it was.
void compute_token_mask(GrammarMatcher& matcher, const TokenVocabulary& vocab, TokenMask& out);

// Masks of recent states of one matcher (one sequence), keyed by
// GrammarMatcher::state_key: inside a JSON string or a repetition the state
// repeats from token to token, and its mask with it. Bound to the matcher
// it last served (GrammarMatcher::lineage; state keys of two matchers, or of
// a matcher and its copy, are not comparable): passing another clears it.
// Misses are computed by TokenMaskTables: pass the tables shared by every
// sequence of the grammar, or the vocabulary, whose shared_tables() are
// then used.
class TokenMaskCache {
public:
    explicit TokenMaskCache(size_t capacity = 16) : capacity_(capacity) {}

    void compute(GrammarMatcher& matcher, TokenMaskTables& tables, TokenMask& out);
    void compute(GrammarMatcher& matcher, const TokenVocabulary& vocab, TokenMask& out);
    size_t hits() const { return hits_; }
    size_t misses() const { return misses_; }

private:
    struct Entry {
        std::vector<uint64_t> key;
        TokenMask mask;
    };
    size_t capacity_;
    std::shared_ptr<const char> owner_;
    std::vector<Entry> entries_;  // most recently used last
    std::vector<uint64_t> key_;
    std::shared_ptr<TokenMaskTables> tables_;  // for the vocabulary overload
    size_t hits_ = 0, misses_ = 0;
};

}  // namespace tessera
