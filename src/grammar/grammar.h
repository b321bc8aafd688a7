// The grammar IR every front end (GBNF, JSON Schema, ...) compiles to: rules
// of alternatives, each a sequence of byte classes and rule references. Over
// bytes, not code points, so a token's bytes can be matched one at a time.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace tessera {

// A set of byte values (256 bits).
struct ByteSet {
    std::array<uint64_t, 4> bits{};

    bool has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
    void add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
    void add_range(uint8_t lo, uint8_t hi) {
        for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
    }
    void merge(const ByteSet& o) {
        for (size_t i = 0; i < 4; ++i) bits[i] |= o.bits[i];
    }
    bool empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
    bool operator==(const ByteSet& o) const = default;
};

// One element of an alternative: a byte out of a set, or a whole rule. In the
// flat form each alternative is followed by an End symbol naming its rule.
struct GrammarSymbol {
    enum class Kind : uint8_t { Bytes, Rule, End };
    Kind kind = Kind::Bytes;
    uint32_t index = 0;  // Bytes: into byte_sets; Rule and End: rule id
};

// Guards against grammars that would cost the server too much to compile or
// match. Every front end counts against the same numbers.
struct GrammarLimits {
    size_t max_source_bytes = 1 << 20;  // grammar or schema text
    size_t max_rules = 20000;
    size_t max_symbols = 1 << 20;       // all alternatives together
    size_t max_nesting = 100;           // groups / schema levels
    uint32_t max_repetition = 10000;    // {m,n} bounds, minItems, maxLength, ...
    // Building the grammar (GrammarBuilder, from its construction to build()):
    // past it the compile fails. The size caps above bound it already; this
    // is the backstop for inputs that are within them but slow.
    double max_compile_seconds = 5.0;
    // Prebuilding a compiled grammar's token tables (TokenMaskTables::
    // build_all) before its request is admitted; tables not built in time
    // are built lazily, inside the masks that need them.
    double table_build_seconds = 2.0;
};

// Immutable, validated grammar in flat form. Each alternative is stored as its
// symbols followed by an end marker, so a matcher item is just a position.
class Grammar {
public:
    struct Alternative {
        uint32_t begin = 0;  // into symbols(); symbols()[end] is the End symbol
        uint32_t end = 0;
    };

    uint32_t root() const { return root_; }
    size_t n_rules() const { return rule_alts_.size(); }
    const std::string& rule_name(uint32_t rule) const { return names_[rule]; }
    const std::vector<Alternative>& alternatives(uint32_t rule) const { return rule_alts_[rule]; }
    bool nullable(uint32_t rule) const { return nullable_[rule]; }
    // For each alternative `rule ::= rule rest` (direct left recursion), the
    // position of `rest`: where a finished `rule` always continues, whatever
    // its context (the alternative was predicted with it).
    const std::vector<uint32_t>& left_recursions(uint32_t rule) const { return left_recursions_[rule]; }
    // Bytes that can come right after a match of `rule`, in any context
    // (LL's FOLLOW set; the end of input is not a byte).
    const ByteSet& follow(uint32_t rule) const { return follow_[rule]; }
    // Inside a repetition's helper rules: a position, the same place one
    // repetition of the element further on, and how many repetitions remain
    // at the first (the second has one fewer). While the second still has
    // more than a token's bytes remaining, no token tells the two apart, so
    // they share a token table (TokenMaskTables).
    struct ShorterPosition {
        uint32_t pos;
        uint32_t remaining;
    };
    const std::unordered_map<uint32_t, ShorterPosition>& shorter() const { return shorter_; }
    const std::vector<GrammarSymbol>& symbols() const { return symbols_; }
    const ByteSet& byte_set(uint32_t index) const { return byte_sets_[index]; }

private:
    friend class GrammarBuilder;
    void compute_follow();
    uint32_t root_ = 0;
    std::vector<std::string> names_;
    std::vector<std::vector<Alternative>> rule_alts_;
    std::vector<bool> nullable_;
    std::vector<std::vector<uint32_t>> left_recursions_;
    std::vector<ByteSet> follow_;
    std::unordered_map<uint32_t, ShorterPosition> shorter_;
    std::vector<GrammarSymbol> symbols_;  // alternatives back to back, each ended by End
    std::vector<ByteSet> byte_sets_;
};

// Collects rules while a front end parses, then checks and flattens them.
class GrammarBuilder {
public:
    explicit GrammarBuilder(GrammarLimits limits = {})
        : limits_(limits), start_(std::chrono::steady_clock::now()) {}

    const GrammarLimits& limits() const { return limits_; }
    // The rule with this name, created empty (and undefined) on first use.
    uint32_t rule(const std::string& name);
    // A fresh rule with a unique name derived from `base`.
    uint32_t new_rule(const std::string& base);
    bool defined(uint32_t rule) const { return defined_[rule]; }
    // Adds an alternative; an empty one matches the empty string.
    Status add_alternative(uint32_t rule, std::vector<GrammarSymbol> symbols);
    // Marks a rule defined with no alternatives yet (a front end adds them).
    void define(uint32_t rule) { defined_[rule] = true; }

    GrammarSymbol bytes(const ByteSet& set);
    GrammarSymbol byte(uint8_t b);
    static GrammarSymbol ref(uint32_t rule) { return {GrammarSymbol::Kind::Rule, rule}; }
    // The UTF-8 encodings of code points in [lo, hi] (surrogates excluded)
    // as a symbol: a byte class when all are one byte, else a new rule.
    Expected<GrammarSymbol> code_point_ranges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);
    // Appends the bytes of `text` as symbols.
    void append_literal(const std::string& text, std::vector<GrammarSymbol>& out);
    // A rule matching `sym` between min and max times (max = kUnbounded: no
    // upper bound). Unbounded repetition is left-recursive, which an Earley
    // matcher handles in constant space per byte.
    static constexpr uint32_t kUnbounded = UINT32_MAX;
    Expected<GrammarSymbol> repeat(GrammarSymbol sym, uint32_t min, uint32_t max);

    // Checks every referenced rule is defined and the root exists, flattens.
    Expected<Grammar> build(const std::string& root_name);

private:
    Status count_symbols(size_t n);
    Status check_time() const;

    GrammarLimits limits_;
    std::chrono::steady_clock::time_point start_;
    std::vector<std::string> names_;
    std::unordered_map<std::string, uint32_t> ids_;
    std::vector<bool> defined_;
    std::vector<std::vector<std::vector<GrammarSymbol>>> alts_;
    std::vector<ByteSet> byte_sets_;
    std::map<std::array<uint64_t, 4>, uint32_t> byte_set_ids_;  // interning
    // Grammar::shorter() as (rule, alternative, symbol) places, resolved in build().
    struct Shorter {
        uint32_t rule, alt, index, shorter_rule, shorter_alt, shorter_index, remaining;
    };
    std::vector<Shorter> shorter_;
    std::map<std::array<uint32_t, 4>, uint32_t> repeats_;  // bounded repetitions by (element, min, max)
    size_t n_symbols_ = 0;
};

}  // namespace tessera
