// A byte-level recognizer for a Grammar: an Earley parser whose item sets are
// kept as a stack, one per byte consumed, so rolling back n bytes is popping n
// sets and a copy is a copy of flat arrays. Used per sequence (what may come
// next, is the output complete) and by the token mask walk.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace tessera {

class GrammarMatcher {
public:
    explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);
    // Matches the rest of one alternative from symbol position `pos`, its
    // context unknown: accepting() then says that alternative has ended (its
    // rule is complete; what follows depends on the context). Used to
    // precompute the tokens a position decides alone (TokenMaskTables).
    GrammarMatcher(std::shared_ptr<const Grammar> grammar, uint32_t pos);

    // Consumes one byte; false (state unchanged) when the grammar rejects it.
    bool advance(uint8_t byte);
    // Consumes all bytes or, on the first rejected one, none.
    bool advance(std::string_view bytes);
    // Forgets the last n consumed bytes (n <= n_bytes()).
    void rollback(size_t n);

    size_t n_bytes() const { return set_begin_.size() - 1; }
    // Bytes the grammar allows next.
    const ByteSet& allowed_bytes() const { return allowed_.back(); }
    // The input so far is a complete match (end of sequence allowed here).
    bool accepting() const { return accepting_.back(); }
    // No byte can follow (with accepting(): the match must end here).
    bool finished() const { return allowed_.back().empty(); }
    const Grammar& grammar() const { return *grammar_; }
    const std::shared_ptr<const Grammar>& grammar_ptr() const { return grammar_; }
    // The positions of the current set's kernel items: unfinished items that
    // began before this set (or at the top level). Every other item was
    // predicted from them, and every finished one's continuation is among
    // them, so what may follow is the union of what may follow each, each
    // read first without its context (TokenMaskTables). Sorted, unique.
    void kernel_positions(std::vector<uint32_t>& out) const;
    // What decides every future answer of this matcher: the current set's
    // unfinished items, each origin named by its set's serial number (unique within this
    // matcher's history, so a rollback and a different re-advance never give
    // an old key) or as "this set", sorted, then accepting(). Equal keys:
    // equal masks.
    void state_key(std::vector<uint64_t>& out) const;
    // Identifies this matcher's history for caches of state keys: a copy
    // gets a new one (its serials would collide with the original's), and a
    // cache that holds it keeps its address from being reused.
    const std::shared_ptr<const char>& lineage() const { return lineage_.id; }

private:
    struct Item {
        uint32_t pos;     // into grammar symbols: what comes next
        uint32_t origin;  // the set where this alternative started, or kOutside
    };
    // Origin of the top-level items (root alternatives, or the one position
    // a context-free matcher starts from): their end is accepting(), with no
    // parent to complete.
    static constexpr uint32_t kOutside = UINT32_MAX;
    void add(Item item);
    void close_current_set();
    void begin_set();

    std::shared_ptr<const Grammar> grammar_;
    std::vector<Item> items_;          // all sets back to back
    std::vector<uint32_t> set_begin_;  // [n_bytes + 1] first item of each set
    std::vector<ByteSet> allowed_;     // [n_bytes + 1]
    std::vector<bool> accepting_;      // [n_bytes + 1]
    std::vector<uint64_t> set_serial_;  // [n_bytes + 1] see state_key()
    uint64_t next_serial_ = 0;
    struct Lineage {
        std::shared_ptr<const char> id = std::make_shared<const char>(0);
        Lineage() = default;
        Lineage(const Lineage&) {}
        Lineage& operator=(const Lineage&) {
            id = std::make_shared<const char>(0);
            return *this;
        }
        Lineage(Lineage&&) = default;
        Lineage& operator=(Lineage&&) = default;
    };
    Lineage lineage_;

    // Scratch for the set being built: an open-addressing table of its items
    // (key pos:origin) and per-rule "already predicted" stamps.
    std::vector<uint64_t> seen_keys_;
    std::vector<uint32_t> seen_stamp_;
    std::vector<uint32_t> predicted_stamp_;
    uint32_t stamp_ = 0;
    size_t seen_count_ = 0;
};

}  // namespace tessera
