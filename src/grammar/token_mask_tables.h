// xgrammar's context-independent split, for an Earley matcher: per grammar
// position, the tokens that position decides without looking at the parse
// stack, computed once per (grammar, vocabulary) and shared by every
// sequence. At run time a mask is the union of the accepted sets of the
// current set's kernel positions, plus the few "uncertain" tokens (those that
// run past the end of the position's rule) walked through the real matcher.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "grammar/token_mask.h"

namespace tessera {

class TokenMaskTables {
public:
    // The vocabulary must outlive the tables.
    TokenMaskTables(std::shared_ptr<const Grammar> grammar, const TokenVocabulary& vocab);

    const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
    const TokenVocabulary& vocab() const { return *vocab_; }

    // The tokens allowed after the matcher's input (a matcher of this
    // grammar); the same mask as compute_token_mask. Builds the tables of
    // positions seen for the first time. Thread-safe; the matcher is used as
    // scratch and left as it was.
    void compute(GrammarMatcher& matcher, TokenMask& out);

    // Builds every position's table now (what xgrammar does at compile
    // time), so no later mask pays for one. Costs about one full vocabulary
    // walk per position that can start a kernel item, outside bounded
    // repetitions (inside, a few walks per repetition). Stops once `deadline`
    // has passed (checked between positions, so it overshoots by at most one
    // table's build), leaving the rest to be built lazily; true when every
    // table was built.
    bool build_all(std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
    // Positions with a table, and distinct tables (positions deep in a
    // repetition share one: Grammar::shorter).
    size_t n_built() const;
    size_t n_tables() const;
    // The distinct tables' bit sets, in bytes (what a cache of tables holds).
    size_t memory_bytes() const;

private:
    // What one position decides alone. A token is accepted when the rest of
    // the position's alternative consumes all its bytes; uncertain when it is
    // not accepted but the alternative can end after one or more of its
    // bytes with a byte of its rule's FOLLOW set next (the rest depends on
    // the context); else rejected.
    struct Position {
        TokenMask accepted;               // by token id
        std::vector<uint64_t> uncertain;  // by index into vocab.sorted()
    };
    const Position& position(uint32_t pos);
    // A new table for `pos`, derived from a place before it in its
    // repetition where one is near enough.
    std::shared_ptr<const Position> build_place(uint32_t pos);
    std::shared_ptr<const Position> find(uint32_t pos) const;
    // The table of `pos`; with a base (the table of a place that differs
    // from `pos` only for tokens of min_len bytes or more), only those
    // tokens are walked and the rest copied.
    Position build(uint32_t pos, const Position* base, size_t min_len) const;

    std::shared_ptr<const Grammar> grammar_;
    const TokenVocabulary* vocab_;
    size_t max_token_bytes_ = 0;
    std::vector<uint16_t> lengths_;  // token bytes, by index into vocab.sorted()
    // Grammar::shorter() inverted: a place, the one a repetition before it
    // and the remaining repetitions there.
    std::unordered_map<uint32_t, Grammar::ShorterPosition> longer_;
    mutable std::mutex mu_;
    std::unordered_map<uint32_t, std::shared_ptr<const Position>> positions_;
};

}  // namespace tessera
