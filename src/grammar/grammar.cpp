// Grammar building: rule names to ids, interned byte classes, UTF-8 code point
// ranges as byte sequences, repetition as helper rules, and the final check
// and flattening.
#include "grammar/grammar.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tokenizer/utf8.h"

namespace tessera {

uint32_t GrammarBuilder::rule(const std::string& name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(names_.size());
    ids_.emplace(name, id);
    names_.push_back(name);
    defined_.push_back(false);
    alts_.emplace_back();
    return id;
}

uint32_t GrammarBuilder::new_rule(const std::string& base) {
    std::string name = base;
    for (size_t i = names_.size(); ids_.count(name); ++i) name = base + "-" + std::to_string(i);
    const uint32_t id = rule(name);
    defined_[id] = true;
    return id;
}

Status GrammarBuilder::check_time() const {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (seconds > limits_.max_compile_seconds) {
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", limits_.max_compile_seconds);
        return Status::error(std::string("grammar compile took longer than the limit of ") + limit +
                             " s (max_compile_seconds)");
    }
    return ok_status();
}

Status GrammarBuilder::count_symbols(size_t n) {
    n_symbols_ += n + 1;
    if (n_symbols_ > limits_.max_symbols) {
        return Status::error("grammar too large: more than " + std::to_string(limits_.max_symbols) + " symbols");
    }
    return check_time();
}

Status GrammarBuilder::add_alternative(uint32_t rule, std::vector<GrammarSymbol> symbols) {
    TS_RETURN_IF_ERROR(count_symbols(symbols.size()));
    defined_[rule] = true;
    alts_[rule].push_back(std::move(symbols));
    return ok_status();
}

GrammarSymbol GrammarBuilder::bytes(const ByteSet& set) {
    auto [it, added] = byte_set_ids_.emplace(set.bits, static_cast<uint32_t>(byte_sets_.size()));
    if (added) byte_sets_.push_back(set);
    return {GrammarSymbol::Kind::Bytes, it->second};
}

GrammarSymbol GrammarBuilder::byte(uint8_t b) {
    ByteSet s;
    s.add(b);
    return bytes(s);
}

void GrammarBuilder::append_literal(const std::string& text, std::vector<GrammarSymbol>& out) {
    for (unsigned char c : text) out.push_back(byte(c));
}

namespace {

int utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// Splits [lo, hi] (one encoded length) until every piece's encodings are a
// product of byte ranges: [lo_b0, hi_b0] x [lo_b1, hi_b1] x ...
void split_utf8(uint32_t lo, uint32_t hi, std::vector<std::pair<uint32_t, uint32_t>>& out) {
    for (int i = 1; i < utf8_length(hi); ++i) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                split_utf8(lo, lo | m, out);
                split_utf8((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                split_utf8(lo, (hi & ~m) - 1, out);
                split_utf8(hi & ~m, hi, out);
                return;
            }
        }
    }
    out.emplace_back(lo, hi);
}

}  // namespace

Expected<GrammarSymbol> GrammarBuilder::code_point_ranges(
    const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
    // Cut at encoding-length boundaries and around the surrogates.
    static constexpr uint32_t kCuts[][2] = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
    ByteSet ascii;
    std::vector<std::pair<uint32_t, uint32_t>> multi;
    for (auto [lo, hi] : ranges) {
        for (const auto& cut : kCuts) {
            const uint32_t a = std::max(lo, cut[0]), b = std::min(hi, cut[1]);
            if (a > b) continue;
            if (b < 0x80) {
                ascii.add_range(static_cast<uint8_t>(a), static_cast<uint8_t>(b));
            } else {
                split_utf8(a, b, multi);
            }
        }
    }
    if (multi.empty()) {
        if (ascii.empty()) return Status::error("empty character class");
        return bytes(ascii);
    }
    const uint32_t r = new_rule("char-class");
    if (!ascii.empty()) TS_RETURN_IF_ERROR(add_alternative(r, {bytes(ascii)}));
    for (auto [lo, hi] : multi) {
        std::string a, b;  // split_utf8 made both the same length
        utf8_append(a, lo);
        utf8_append(b, hi);
        std::vector<GrammarSymbol> seq;
        for (size_t i = 0; i < a.size(); ++i) {
            ByteSet s;
            s.add_range(static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i]));
            seq.push_back(bytes(s));
        }
        TS_RETURN_IF_ERROR(add_alternative(r, std::move(seq)));
    }
    if (names_.size() > limits_.max_rules) return Status::error("grammar too large: too many rules");
    return ref(r);
}

Expected<GrammarSymbol> GrammarBuilder::repeat(GrammarSymbol sym, uint32_t min, uint32_t max) {
    const uint32_t bound = max == kUnbounded ? min : max;
    if (bound > limits_.max_repetition || min > max) {
        return Status::error("repetition bound out of range (at most " + std::to_string(limits_.max_repetition) + ")");
    }
    // The same bounded repetition of the same element is one rule wherever
    // it occurs (two strings of one maxLength), so its chain of places gets
    // one set of token tables. Unbounded ones stay apart: their rule's
    // FOLLOW set, which sharing would widen, decides which tokens a mask
    // must walk.
    const std::array<uint32_t, 4> key{static_cast<uint32_t>(sym.kind), sym.index, min, max};
    if (max != kUnbounded) {
        if (auto it = repeats_.find(key); it != repeats_.end()) return ref(it->second);
    }
    const uint32_t r = new_rule("repeat");
    if (max != kUnbounded) repeats_.emplace(key, r);
    const auto alt_index = static_cast<uint32_t>(alts_[r].size());
    std::vector<GrammarSymbol> head(min, sym);
    // After i of the head's elements, min - i remain.
    for (uint32_t i = 1; i + 2 <= min; ++i) shorter_.push_back({r, alt_index, i, r, alt_index, i + 1, min - i});
    if (max == kUnbounded) {
        // r ::= head | r sym   (left recursion: one item per byte, not a chain)
        TS_RETURN_IF_ERROR(add_alternative(r, head));
        TS_RETURN_IF_ERROR(add_alternative(r, {ref(r), sym}));
    } else {
        // r ::= head tail_k, tail_k ::= "" | sym tail_{k-1}, nested so that
        // every prefix length is matched by exactly one derivation.
        GrammarSymbol tail{};
        bool has_tail = false;
        for (uint32_t k = 0; k < max - min; ++k) {
            const uint32_t t = new_rule("repeat-tail");
            TS_RETURN_IF_ERROR(add_alternative(t, {}));
            std::vector<GrammarSymbol> more{sym};
            if (has_tail) more.push_back(tail);
            // tail_j (j = k + 1) after its element: j - 1 more may follow.
            if (k >= 2) shorter_.push_back({t, 1, 1, tail.index, 1, 1, k});
            TS_RETURN_IF_ERROR(add_alternative(t, std::move(more)));
            tail = ref(t);
            has_tail = true;
        }
        if (has_tail) head.push_back(tail);
        TS_RETURN_IF_ERROR(add_alternative(r, std::move(head)));
    }
    if (names_.size() > limits_.max_rules) return Status::error("grammar too large: too many rules");
    return ref(r);
}

Expected<Grammar> GrammarBuilder::build(const std::string& root_name) {
    auto root = ids_.find(root_name);
    if (root == ids_.end() || !defined_[root->second]) {
        return Status::error("grammar has no '" + root_name + "' rule");
    }
    for (size_t r = 0; r < names_.size(); ++r) {
        if (!defined_[r]) return Status::error("undefined rule '" + names_[r] + "'");
    }
    if (names_.size() > limits_.max_rules) {
        return Status::error("grammar too large: more than " + std::to_string(limits_.max_rules) + " rules");
    }
    Grammar g;
    g.root_ = root->second;
    g.names_ = names_;
    g.byte_sets_ = byte_sets_;
    g.rule_alts_.resize(names_.size());
    g.left_recursions_.resize(names_.size());
    g.symbols_.reserve(n_symbols_);
    for (size_t r = 0; r < names_.size(); ++r) {
        for (const auto& alt : alts_[r]) {
            Grammar::Alternative a;
            a.begin = static_cast<uint32_t>(g.symbols_.size());
            g.symbols_.insert(g.symbols_.end(), alt.begin(), alt.end());
            a.end = static_cast<uint32_t>(g.symbols_.size());
            g.symbols_.push_back({GrammarSymbol::Kind::End, static_cast<uint32_t>(r)});
            g.rule_alts_[r].push_back(a);
            if (!alt.empty() && alt[0].kind == GrammarSymbol::Kind::Rule && alt[0].index == r) {
                g.left_recursions_[r].push_back(a.begin + 1);
            }
        }
    }
    // Nullable rules, to a fixed point: a rule is nullable when one of its
    // alternatives consists of nullable rules only.
    g.nullable_.assign(names_.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < names_.size(); ++r) {
            if (g.nullable_[r]) continue;
            for (const auto& alt : alts_[r]) {
                const bool all = std::all_of(alt.begin(), alt.end(), [&](const GrammarSymbol& s) {
                    return s.kind == GrammarSymbol::Kind::Rule && g.nullable_[s.index];
                });
                if (all) {
                    g.nullable_[r] = true;
                    changed = true;
                    break;
                }
            }
        }
    }
    g.compute_follow();
    for (const Shorter& sh : shorter_) {
        g.shorter_[g.rule_alts_[sh.rule][sh.alt].begin + sh.index] = {
            g.rule_alts_[sh.shorter_rule][sh.shorter_alt].begin + sh.shorter_index, sh.remaining};
    }
    TS_RETURN_IF_ERROR(check_time());
    return g;
}

void Grammar::compute_follow() {
    // FIRST per rule, then FOLLOW per rule, each to a fixed point. `first_of`
    // is the FIRST set of the symbols from `pos` to their alternative's end,
    // and whether they are all nullable.
    std::vector<ByteSet> first(n_rules());
    const auto first_of = [&](uint32_t pos, ByteSet& out) {
        for (;; ++pos) {
            const GrammarSymbol sym = symbols_[pos];
            if (sym.kind == GrammarSymbol::Kind::End) return true;
            if (sym.kind == GrammarSymbol::Kind::Bytes) {
                out.merge(byte_sets_[sym.index]);
                return false;
            }
            out.merge(first[sym.index]);
            if (!nullable_[sym.index]) return false;
        }
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < n_rules(); ++r) {
            ByteSet f = first[r];
            for (const auto& alt : rule_alts_[r]) first_of(alt.begin, f);
            if (!(f == first[r])) {
                first[r] = f;
                changed = true;
            }
        }
    }
    follow_.assign(n_rules(), ByteSet{});
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t a = 0; a < n_rules(); ++a) {
            for (const auto& alt : rule_alts_[a]) {
                for (uint32_t pos = alt.begin; pos < alt.end; ++pos) {
                    if (symbols_[pos].kind != GrammarSymbol::Kind::Rule) continue;
                    const uint32_t b = symbols_[pos].index;
                    ByteSet f = follow_[b];
                    if (first_of(pos + 1, f)) f.merge(follow_[a]);
                    if (!(f == follow_[b])) {
                        follow_[b] = f;
                        changed = true;
                    }
                }
            }
        }
    }
}

}  // namespace tessera
