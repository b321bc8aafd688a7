// Earley recognition over bytes: scan one byte into a new set, then close it
// (predict rules, complete finished alternatives). Nullable rules are stepped
// over when predicted (Aycock and Horspool), so completions never need to
// revisit the set being built.
#include "grammar/matcher.h"

#include "core/check.h"

namespace tessera {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
    predicted_stamp_.assign(grammar_->n_rules(), 0);
    begin_set();
    for (const auto& alt : grammar_->alternatives(grammar_->root())) add({alt.begin, kOutside});
    close_current_set();
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar, uint32_t pos) : grammar_(std::move(grammar)) {
    TS_CHECK(pos < grammar_->symbols().size());
    predicted_stamp_.assign(grammar_->n_rules(), 0);
    begin_set();
    add({pos, kOutside});
    close_current_set();
}

void GrammarMatcher::begin_set() {
    set_begin_.push_back(static_cast<uint32_t>(items_.size()));
    allowed_.emplace_back();
    accepting_.push_back(false);
    set_serial_.push_back(next_serial_++);
    ++stamp_;
    if (stamp_ == 0) {  // wrapped: old stamps could alias
        std::fill(seen_stamp_.begin(), seen_stamp_.end(), 0);
        std::fill(predicted_stamp_.begin(), predicted_stamp_.end(), 0);
        stamp_ = 1;
    }
    seen_count_ = 0;
}

void GrammarMatcher::add(Item item) {
    if ((seen_count_ + 1) * 2 > seen_keys_.size()) {
        // Grow and re-enter the current set's items.
        const size_t cap = std::max<size_t>(64, seen_keys_.size() * 2);
        seen_keys_.assign(cap, 0);
        seen_stamp_.assign(cap, 0);
        seen_count_ = 0;
        const uint32_t begin = set_begin_.back();
        const std::vector<Item> current(items_.begin() + begin, items_.end());
        items_.resize(begin);
        for (const Item& it : current) add(it);
    }
    const uint64_t key = (uint64_t{item.pos} << 32) | item.origin;
    const size_t mask = seen_keys_.size() - 1;
    size_t h = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (seen_stamp_[h] == stamp_) {
        if (seen_keys_[h] == key) return;
        h = (h + 1) & mask;
    }
    seen_stamp_[h] = stamp_;
    seen_keys_[h] = key;
    ++seen_count_;
    items_.push_back(item);
}

void GrammarMatcher::close_current_set() {
    const Grammar& g = *grammar_;
    const auto& symbols = g.symbols();
    const auto k = static_cast<uint32_t>(set_begin_.size() - 1);
    ByteSet allowed;
    bool accepting = false;
    for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
        const Item it = items_[i];
        const GrammarSymbol sym = symbols[it.pos];
        switch (sym.kind) {
            case GrammarSymbol::Kind::Bytes:
                allowed.merge(g.byte_set(sym.index));
                break;
            case GrammarSymbol::Kind::Rule:
                if (predicted_stamp_[sym.index] != stamp_) {
                    predicted_stamp_[sym.index] = stamp_;
                    for (const auto& alt : g.alternatives(sym.index)) add({alt.begin, k});
                }
                if (g.nullable(sym.index)) add({it.pos + 1, it.origin});
                break;
            case GrammarSymbol::Kind::End:
                if (it.origin == kOutside) {
                    // A top-level alternative ended. Where its rule is left-
                    // recursive, it also goes on as its own prefix.
                    accepting = true;
                    for (uint32_t p : g.left_recursions(sym.index)) add({p, kOutside});
                    break;
                }
                if (it.origin == k) break;  // empty match: covered by the nullable step-over
                for (uint32_t j = set_begin_[it.origin]; j < set_begin_[it.origin + 1]; ++j) {
                    const Item parent = items_[j];
                    const GrammarSymbol& ps = symbols[parent.pos];
                    if (ps.kind == GrammarSymbol::Kind::Rule && ps.index == sym.index) {
                        add({parent.pos + 1, parent.origin});
                    }
                }
                break;
        }
    }
    allowed_.back() = allowed;
    accepting_.back() = accepting;
}

bool GrammarMatcher::advance(uint8_t byte) {
    if (!allowed_.back().has(byte)) return false;
    const Grammar& g = *grammar_;
    const uint32_t begin = set_begin_.back();
    const auto end = static_cast<uint32_t>(items_.size());
    begin_set();
    for (uint32_t i = begin; i < end; ++i) {
        const Item it = items_[i];
        const GrammarSymbol sym = g.symbols()[it.pos];
        if (sym.kind == GrammarSymbol::Kind::Bytes && g.byte_set(sym.index).has(byte)) add({it.pos + 1, it.origin});
    }
    close_current_set();
    return true;
}

bool GrammarMatcher::advance(std::string_view bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (!advance(static_cast<uint8_t>(bytes[i]))) {
            rollback(i);
            return false;
        }
    }
    return true;
}

void GrammarMatcher::rollback(size_t n) {
    TS_CHECK(n <= n_bytes());
    if (n == 0) return;
    const size_t keep = set_begin_.size() - n;
    items_.resize(set_begin_[keep]);
    set_begin_.resize(keep);
    allowed_.resize(keep);
    accepting_.resize(keep);
    set_serial_.resize(keep);
}

void GrammarMatcher::state_key(std::vector<uint64_t>& out) const {
    out.clear();
    const uint32_t k = static_cast<uint32_t>(set_begin_.size() - 1);
    const auto& symbols = grammar_->symbols();
    for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
        // Finished alternatives have done their work (completion) and only
        // show in accepting(), added below.
        if (symbols[items_[i].pos].kind == GrammarSymbol::Kind::End) continue;
        out.push_back(items_[i].pos);
        const uint32_t origin = items_[i].origin;
        out.push_back(origin == k ? UINT64_MAX : origin == kOutside ? UINT64_MAX - 1 : set_serial_[origin]);
    }
    // Sort (pos, origin) pairs: the same set may have been built in another order.
    std::vector<std::pair<uint64_t, uint64_t>> pairs(out.size() / 2);
    for (size_t i = 0; i < pairs.size(); ++i) pairs[i] = {out[2 * i], out[2 * i + 1]};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size(); ++i) {
        out[2 * i] = pairs[i].first;
        out[2 * i + 1] = pairs[i].second;
    }
    out.push_back(accepting() ? 1 : 0);
}

void GrammarMatcher::kernel_positions(std::vector<uint32_t>& out) const {
    out.clear();
    const auto k = static_cast<uint32_t>(set_begin_.size() - 1);
    const auto& symbols = grammar_->symbols();
    for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
        if (items_[i].origin == k || symbols[items_[i].pos].kind == GrammarSymbol::Kind::End) continue;
        out.push_back(items_[i].pos);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace tessera
