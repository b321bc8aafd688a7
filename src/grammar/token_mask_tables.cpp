// Per-position token tables and the masks made from them. Why the union is
// exact: every item of the current set was predicted from a kernel item or
// is a finished one whose continuations are kernel items (Earley closure
// completes them in place), so a token is allowed iff some kernel item's
// derivation consumes it. Until that derivation finishes the kernel item's
// own alternative, it only uses items predicted after it, which the
// position's context-free matcher reproduces; so the position's "accepted"
// tokens are allowed, its "rejected" ones are not allowed through it, and
// only its "uncertain" ones (the alternative ends inside the token, and the
// next byte may follow the rule somewhere: its FOLLOW set) need the real
// parse stack. An end before the token's first byte needs no care: the
// continuation is already a kernel item of the same set.
#include "grammar/token_mask_tables.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

#include "core/check.h"

namespace tessera {

namespace {

void set_bit(std::vector<uint64_t>& bits, size_t i) { bits[i >> 6] |= uint64_t{1} << (i & 63); }
void clear_bit(std::vector<uint64_t>& bits, size_t i) { bits[i >> 6] &= ~(uint64_t{1} << (i & 63)); }

}  // namespace

TokenMaskTables::TokenMaskTables(std::shared_ptr<const Grammar> grammar, const TokenVocabulary& vocab)
    : grammar_(std::move(grammar)), vocab_(&vocab) {
    for (int32_t id : vocab.sorted()) {
        lengths_.push_back(static_cast<uint16_t>(vocab.bytes(id).size()));
        max_token_bytes_ = std::max(max_token_bytes_, vocab.bytes(id).size());
    }
    for (const auto& [pos, shorter] : grammar_->shorter()) longer_[shorter.pos] = {pos, shorter.remaining};
}

size_t TokenMaskTables::n_built() const {
    std::lock_guard<std::mutex> lock(mu_);
    return positions_.size();
}

size_t TokenMaskTables::n_tables() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::unordered_set<const Position*> distinct;
    for (const auto& [pos, table] : positions_) distinct.insert(table.get());
    return distinct.size();
}

size_t TokenMaskTables::memory_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::unordered_set<const Position*> distinct;
    size_t bytes = 0;
    for (const auto& [pos, table] : positions_) {
        if (distinct.insert(table.get()).second) {
            bytes += (table->accepted.size() + table->uncertain.size()) * sizeof(uint64_t);
        }
    }
    return bytes;
}

std::shared_ptr<const TokenMaskTables::Position> TokenMaskTables::find(uint32_t pos) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = positions_.find(pos);
    return it == positions_.end() ? nullptr : it->second;
}

TokenMaskTables::Position TokenMaskTables::build(uint32_t pos, const Position* base, size_t min_len) const {
    const TokenVocabulary& vocab = *vocab_;
    const auto& sorted = vocab.sorted();
    const auto& lcp = vocab.shared_prefix();
    Position p;
    if (base != nullptr) {
        // Tokens shorter than min_len keep the base's classes; the rest are walked.
        p = *base;
        for (size_t i = 0; i < sorted.size(); ++i) {
            if (lengths_[i] < min_len) continue;
            clear_bit(p.accepted, static_cast<size_t>(sorted[i]));
            clear_bit(p.uncertain, i);
        }
    } else {
        p.accepted.assign((static_cast<size_t>(vocab.n_tokens()) + 63) / 64, 0);
        p.uncertain.assign((sorted.size() + 63) / 64, 0);
    }
    GrammarMatcher m(grammar_, pos);
    // The alternative's end leads to its rule's context, whose first byte is
    // in the rule's FOLLOW set: a token ending it at byte e is uncertain only
    // if its byte e is in there.
    uint32_t end = pos;
    while (grammar_->symbols()[end].kind != GrammarSymbol::Kind::End) ++end;
    const ByteSet& follow = grammar_->follow(grammar_->symbols()[end].index);
    // open[d]: with d bytes fed, the alternative ended after 1..d-1 of them
    // with a FOLLOW byte next; accepting[d]: it ended after exactly d.
    std::vector<uint8_t> open{0}, accepting{0};
    size_t depth = 0;
    size_t shared = 0;  // bytes token i shares with the last token walked
    size_t i = 0;
    while (i < sorted.size()) {
        shared = std::min<size_t>(shared, lcp[i]);
        if (lengths_[i] < min_len) {
            ++i;
            continue;
        }
        const std::string& bytes = vocab.bytes(sorted[i]);
        if (depth > shared) {
            m.rollback(depth - shared);
            depth = shared;
            open.resize(depth + 1);
            accepting.resize(depth + 1);
        }
        // As in compute_token_mask: the last byte is looked up, not fed.
        const size_t last = bytes.size() - 1;
        while (depth < last && m.advance(static_cast<uint8_t>(bytes[depth]))) {
            open.push_back(open.back() | static_cast<uint8_t>(accepting.back() && follow.has(static_cast<uint8_t>(bytes[depth]))));
            accepting.push_back(m.accepting() ? 1 : 0);
            ++depth;
        }
        shared = SIZE_MAX;
        if (depth == last && m.allowed_bytes().has(static_cast<uint8_t>(bytes[last]))) {
            set_bit(p.accepted, static_cast<size_t>(sorted[i]));
            ++i;
            continue;
        }
        // bytes[depth] rejected here: so is every following token sharing
        // bytes[0..depth], and all of them are uncertain or none.
        const bool uncertain = open[depth] || (accepting[depth] && follow.has(static_cast<uint8_t>(bytes[depth])));
        do {
            if (uncertain && lengths_[i] >= min_len) set_bit(p.uncertain, i);
            ++i;
        } while (i < sorted.size() && lcp[i] > depth);
    }
    return p;
}

std::shared_ptr<const TokenMaskTables::Position> TokenMaskTables::build_place(uint32_t pos) {
    // Nearer a repetition's end, a place and the one a repetition further
    // on (`remaining` n at the first) differ only for tokens of n - 1 bytes
    // or more. Along the chain n falls, so a place agrees with each place
    // before it on the tokens shorter than the bound of the link into it:
    // its table is the nearest built one before it (or the first place of
    // the chain, or the one where sharing begins, walked in full) with the
    // long tokens walked again.
    size_t min_len = 0;
    uint32_t base_pos = pos;
    std::shared_ptr<const Position> base;
    for (auto it = longer_.find(base_pos); it != longer_.end() && it->second.remaining - 1 <= max_token_bytes_;
         it = longer_.find(base_pos)) {
        if (base_pos == pos) min_len = it->second.remaining - 1;
        base_pos = it->second.pos;
        if ((base = find(base_pos))) break;
    }
    if (base_pos == pos) return std::make_shared<const Position>(build(pos, nullptr, 0));
    if (!base) {
        base = std::make_shared<const Position>(build(base_pos, nullptr, 0));
        std::lock_guard<std::mutex> lock(mu_);
        base = positions_.emplace(base_pos, base).first->second;
    }
    return std::make_shared<const Position>(build(pos, base.get(), min_len));
}

const TokenMaskTables::Position& TokenMaskTables::position(uint32_t pos) {
    if (auto table = find(pos)) return *table;
    // Deep in a repetition, the place one repetition on has the same table
    // while it still has more repetitions left than a token has bytes.
    uint32_t canonical = pos;
    std::shared_ptr<const Position> table;
    const auto& shorter = grammar_->shorter();
    for (auto it = shorter.find(canonical); it != shorter.end() && it->second.remaining - 1 > max_token_bytes_;
         it = shorter.find(canonical)) {
        canonical = it->second.pos;
        if ((table = find(canonical))) break;
    }
    // Built unlocked (up to tens of milliseconds); a racing thread's copy is dropped.
    if (!table) table = build_place(canonical);
    std::lock_guard<std::mutex> lock(mu_);
    table = positions_.emplace(canonical, table).first->second;
    return *positions_.emplace(pos, table).first->second;
}

bool TokenMaskTables::build_all(std::chrono::steady_clock::time_point deadline) {
    const Grammar& g = *grammar_;
    const auto& symbols = g.symbols();
    for (uint32_t r = 0; r < g.n_rules(); ++r) {
        for (const auto& alt : g.alternatives(r)) {
            // Kernel items have consumed something since their set, except
            // the top-level items of the first set (root alternatives).
            const uint32_t first = r == g.root() ? alt.begin : alt.begin + 1;
            for (uint32_t pos = first; pos < alt.end; ++pos) {
                if (symbols[pos].kind == GrammarSymbol::Kind::End) continue;
                if (std::chrono::steady_clock::now() > deadline) return false;
                position(pos);
            }
        }
    }
    return true;
}

void TokenMaskTables::compute(GrammarMatcher& matcher, TokenMask& out) {
    TS_CHECK(&matcher.grammar() == grammar_.get());
    const TokenVocabulary& vocab = *vocab_;
    out.assign((static_cast<size_t>(vocab.n_tokens()) + 63) / 64, 0);
    if (matcher.accepting()) {
        for (int32_t id : vocab.eos_ids()) set_bit(out, static_cast<size_t>(id));
    }
    std::vector<uint32_t> kernel;
    matcher.kernel_positions(kernel);
    std::vector<uint64_t> uncertain((vocab.sorted().size() + 63) / 64, 0);
    for (uint32_t pos : kernel) {
        const Position& p = position(pos);
        for (size_t w = 0; w < out.size(); ++w) out[w] |= p.accepted[w];
        for (size_t w = 0; w < uncertain.size(); ++w) uncertain[w] |= p.uncertain[w];
    }
    // The uncertain tokens not already allowed, in byte order through the
    // real matcher, rolling back to the prefix shared with the previous one.
    const auto& sorted = vocab.sorted();
    const std::string* prev = nullptr;
    size_t depth = 0;
    for (size_t w = 0; w < uncertain.size(); ++w) {
        for (uint64_t bits = uncertain[w]; bits != 0; bits &= bits - 1) {
            const int32_t id = sorted[w * 64 + static_cast<size_t>(std::countr_zero(bits))];
            if (mask_has(out, id)) continue;
            const std::string& bytes = vocab.bytes(id);
            if (prev != nullptr) {
                const auto mm = std::mismatch(prev->begin(), prev->end(), bytes.begin(), bytes.end());
                const auto shared = static_cast<size_t>(mm.first - prev->begin());
                if (depth > shared) {
                    matcher.rollback(depth - shared);
                    depth = shared;
                }
            }
            prev = &bytes;
            const size_t last = bytes.size() - 1;
            while (depth < last && matcher.advance(static_cast<uint8_t>(bytes[depth]))) ++depth;
            if (depth == last && matcher.allowed_bytes().has(static_cast<uint8_t>(bytes[last]))) {
                set_bit(out, static_cast<size_t>(id));
            }
        }
    }
    matcher.rollback(depth);
}

}  // namespace tessera
