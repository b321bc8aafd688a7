// Regex -> GBNF by recursive descent over the pattern's code points: each
// construct becomes a GBNF expression (sets become classes, or in JSON mode
// classes plus the escaped forms of the characters JSON escapes), emitted as
// one rule. Quantified atoms are parenthesized, so GBNF never sees a
// repetition of a repetition.
#include "grammar/regex.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "grammar/gbnf.h"
#include "tokenizer/utf8.h"

namespace tessera {
namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;
constexpr uint32_t kMaxCodePoint = 0x10FFFF;

Ranges normalized(Ranges r) {
    std::sort(r.begin(), r.end());
    Ranges out;
    for (auto [lo, hi] : r) {
        if (!out.empty() && lo <= out.back().second + 1) {
            out.back().second = std::max(out.back().second, hi);
        } else {
            out.emplace_back(lo, hi);
        }
    }
    return out;
}

Ranges complement(const Ranges& r) {
    Ranges out;
    uint32_t next = 0;
    for (auto [lo, hi] : normalized(r)) {
        if (lo > next) out.emplace_back(next, lo - 1);
        next = hi + 1;
    }
    if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
    return out;
}

// ECMAScript's classes (\d \w \s) and `.`.
Ranges digits() { return {{'0', '9'}}; }
Ranges word() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
Ranges space() {
    return {{0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029},
            {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
Ranges dot() { return complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}); }

// A code point as GBNF writes it inside a literal or a class.
std::string gbnf_char(uint32_t cp) {
    if ((cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z')) {
        return std::string(1, static_cast<char>(cp));
    }
    char buf[12];
    std::snprintf(buf, sizeof buf, "\\U%08X", cp);
    return buf;
}

std::string gbnf_class(const Ranges& r) {
    std::string out = "[";
    for (auto [lo, hi] : r) out += lo == hi ? gbnf_char(lo) : gbnf_char(lo) + "-" + gbnf_char(hi);
    return out + "]";
}

// A string of ASCII bytes as a GBNF literal.
std::string gbnf_literal(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) out += gbnf_char(c);
    return out + "\"";
}

// The canonical JSON form of a code point JSON must escape, or "".
std::string json_escape(uint32_t cp) {
    switch (cp) {
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case '\b': return "\\b";
        case '\f': return "\\f";
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        default: break;
    }
    if (cp < 0x20 || cp == 0x7F) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        return buf;
    }
    return "";
}

class RegexParser {
public:
    RegexParser(std::string_view pattern, const RegexGbnfOptions& options, const GrammarLimits& limits)
        : p_(pattern), options_(options), limits_(limits) {}

    Expected<std::string> run() {
        if (p_.size() > limits_.max_source_bytes) return Status::error("regex too long");
        if (!utf8_is_valid(p_)) return Status::error("regex is not valid UTF-8");
        std::string e;
        TS_ASSIGN_OR_RETURN(e, alternation(0));
        if (pos_ < p_.size()) return error("unmatched ')'");
        return e;
    }

private:
    Status error(const std::string& what) const {
        return Status::error("regex: " + what + " at offset " + std::to_string(pos_));
    }
    bool at_end() const { return pos_ >= p_.size(); }
    char peek() const { return at_end() ? '\0' : p_[pos_]; }
    uint32_t next_code_point() {
        uint32_t cp = 0;
        size_t len = 1;
        utf8_decode(p_, pos_, &cp, &len);  // validated in run()
        pos_ += len;
        return cp;
    }

    // The strings of a set of code points, as an expression.
    std::string set_expr(const Ranges& set) const {
        if (!options_.json_string) return gbnf_class(set);
        Ranges plain;
        std::vector<std::string> escaped;
        for (auto [lo, hi] : set) {
            for (uint32_t cp = lo; cp <= hi && cp <= 0x7F; ++cp) {
                if (!json_escape(cp).empty()) escaped.push_back(gbnf_literal(json_escape(cp)));
            }
        }
        for (auto [lo, hi] : set) {
            // Split around the escaped ones (all ASCII).
            for (uint32_t cp = lo; cp <= hi;) {
                if (cp <= 0x7F && !json_escape(cp).empty()) {
                    ++cp;
                    continue;
                }
                uint32_t end = cp;
                while (end < hi && end + 1 <= 0x7F && json_escape(end + 1).empty()) ++end;
                if (end >= 0x7F) end = hi;
                plain.emplace_back(cp, end);
                cp = end + 1;
            }
        }
        std::string out = plain.empty() ? "" : gbnf_class(plain);
        for (const auto& e : escaped) out += (out.empty() ? "" : " | ") + e;
        return "(" + out + ")";
    }
    std::string char_expr(uint32_t cp) const {
        if (options_.json_string && !json_escape(cp).empty()) return gbnf_literal(json_escape(cp));
        return "\"" + gbnf_char(cp) + "\"";
    }

    Expected<std::string> alternation(size_t depth) {
        if (depth > limits_.max_nesting) return error("groups nested too deeply");
        std::string out;
        for (bool first = true;; first = false) {
            std::string seq;
            TS_ASSIGN_OR_RETURN(seq, sequence(depth));
            out += (first ? "" : " | ") + seq;
            if (peek() != '|') break;
            ++pos_;
        }
        return "(" + out + ")";
    }

    // One alternative. At the top level (depth 0) it may begin with ^ and
    // end with $; in search mode an unanchored side admits any text.
    Expected<std::string> sequence(size_t depth) {
        bool anchored_start = false, anchored_end = false;
        if (depth == 0 && peek() == '^') {
            anchored_start = true;
            ++pos_;
        }
        std::string out;
        while (!at_end() && peek() != '|' && peek() != ')') {
            if (depth == 0 && peek() == '$' && (pos_ + 1 == p_.size() || p_[pos_ + 1] == '|')) {
                anchored_end = true;
                ++pos_;
                break;
            }
            std::string a;
            TS_ASSIGN_OR_RETURN(a, quantified(depth));
            out += (out.empty() ? "" : " ") + a;
        }
        if (options_.search && depth == 0) {  // a group inside is matched as written
            const std::string any = "(" + set_expr(complement({})) + ")*";
            if (!anchored_start) out = any + (out.empty() ? "" : " " + out);
            if (!anchored_end) out += (out.empty() ? "" : " ") + any;
        }
        return out.empty() ? std::string("\"\"") : out;
    }

    Expected<std::string> quantified(size_t depth) {
        std::string a;
        TS_ASSIGN_OR_RETURN(a, atom(depth));
        std::string q;
        const size_t start = pos_;
        const char c = peek();
        if (c == '*' || c == '+' || c == '?') {
            ++pos_;
            q = std::string(1, c);
        } else if (c == '{') {
            uint32_t min = 0, max = 0;
            bool unbounded = false;
            if (!bounds(min, max, unbounded)) {
                pos_ = start;
                return a;  // not a quantifier: the atom stands alone, '{' follows as a literal
            }
            if (min > limits_.max_repetition || (!unbounded && max > limits_.max_repetition)) {
                pos_ = start;
                return error("repetition bound above " + std::to_string(limits_.max_repetition));
            }
            if (!unbounded && max < min) {
                pos_ = start;
                return error("repetition bounds out of order");
            }
            q = "{" + std::to_string(min) + (unbounded ? "," : min == max ? "" : "," + std::to_string(max)) + "}";
        } else {
            return a;
        }
        if (peek() == '?') ++pos_;  // lazy: the same strings
        const char n = peek();
        if (n == '*' || n == '+' || n == '?') return error("nothing to repeat");
        return "(" + a + ")" + q;
    }

    // {m}, {m,}, {m,n}: true and consumed when well formed.
    bool bounds(uint32_t& min, uint32_t& max, bool& unbounded) {
        size_t i = pos_ + 1;
        const auto number = [&](uint32_t& v) {
            const size_t begin = i;
            uint64_t x = 0;
            while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') {
                x = std::min<uint64_t>(x * 10 + static_cast<uint64_t>(p_[i] - '0'), UINT32_MAX);
                ++i;
            }
            v = static_cast<uint32_t>(x);
            return i > begin;
        };
        if (!number(min)) return false;
        max = min;
        unbounded = false;
        if (i < p_.size() && p_[i] == ',') {
            ++i;
            if (!number(max)) unbounded = true;
        }
        if (i >= p_.size() || p_[i] != '}') return false;
        pos_ = i + 1;
        return true;
    }

    Expected<std::string> atom(size_t depth) {
        const char c = peek();
        switch (c) {
            case '(': return group(depth);
            case '[': {
                Ranges set;
                TS_ASSIGN_OR_RETURN(set, class_set());
                return set_expr(set);
            }
            case '.': ++pos_; return set_expr(dot());
            case '\\': {
                Ranges set;
                TS_ASSIGN_OR_RETURN(set, escape(false));
                return set.size() == 1 && set[0].first == set[0].second ? char_expr(set[0].first) : set_expr(set);
            }
            case '*': case '+': case '?': return error("nothing to repeat");
            case '^': return error("anchor '^' inside the pattern (only as its first character) is not supported");
            case '$': return error("anchor '$' inside the pattern (only as its last character) is not supported");
            default: return char_expr(next_code_point());
        }
    }

    Expected<std::string> group(size_t depth) {
        ++pos_;  // (
        if (peek() == '?') {
            const std::string_view rest = p_.substr(pos_);
            if (rest.starts_with("?:")) {
                pos_ += 2;
            } else if (rest.starts_with("?=") || rest.starts_with("?!")) {
                --pos_;
                return error("lookahead '(" + std::string(rest.substr(0, 2)) + "' is not supported");
            } else if (rest.starts_with("?<=") || rest.starts_with("?<!")) {
                --pos_;
                return error("lookbehind '(" + std::string(rest.substr(0, 3)) + "' is not supported");
            } else if (rest.starts_with("?<")) {
                const size_t close = p_.find('>', pos_);
                if (close == std::string_view::npos) return error("unterminated group name");
                pos_ = close + 1;
            } else {
                --pos_;
                return error("group modifier '(?' is not supported");
            }
        }
        std::string e;
        TS_ASSIGN_OR_RETURN(e, alternation(depth + 1));
        if (peek() != ')') return error("missing ')'");
        ++pos_;
        return e;
    }

    // [...] as a set of code points.
    Expected<Ranges> class_set() {
        const size_t open = pos_++;
        const bool negated = peek() == '^';
        if (negated) ++pos_;
        Ranges set;
        bool first = true;
        while (true) {
            if (at_end()) {
                pos_ = open;
                return error("unterminated character class");
            }
            if (peek() == ']' && !first) break;
            if (peek() == ']') return error("empty character class");
            first = false;
            Ranges lo;
            TS_ASSIGN_OR_RETURN(lo, class_atom());
            const bool single = lo.size() == 1 && lo[0].first == lo[0].second;
            if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']' && single) {
                ++pos_;
                Ranges hi;
                TS_ASSIGN_OR_RETURN(hi, class_atom());
                if (hi.size() != 1 || hi[0].first != hi[0].second) return error("range ending in a class escape");
                if (hi[0].first < lo[0].first) return error("character class range out of order");
                set.emplace_back(lo[0].first, hi[0].first);
            } else {
                set.insert(set.end(), lo.begin(), lo.end());
            }
        }
        ++pos_;  // ]
        set = normalized(set);
        return negated ? complement(set) : set;
    }

    Expected<Ranges> class_atom() {
        if (peek() == '\\') return escape(true);
        const uint32_t cp = next_code_point();
        return Ranges{{cp, cp}};
    }

    // After a backslash: a set (\d ...) or one code point.
    Expected<Ranges> escape(bool in_class) {
        const size_t at = pos_++;
        if (at_end()) return error("pattern ends with '\\'");
        const char c = p_[pos_];
        const auto one = [&](uint32_t cp) {
            ++pos_;
            return Ranges{{cp, cp}};
        };
        switch (c) {
            case 'd': ++pos_; return digits();
            case 'D': ++pos_; return complement(digits());
            case 'w': ++pos_; return word();
            case 'W': ++pos_; return complement(word());
            case 's': ++pos_; return space();
            case 'S': ++pos_; return complement(space());
            case 'n': return one('\n');
            case 'r': return one('\r');
            case 't': return one('\t');
            case 'f': return one('\f');
            case 'v': return one('\v');
            case '0':
                if (pos_ + 1 < p_.size() && p_[pos_ + 1] >= '0' && p_[pos_ + 1] <= '9') break;
                return one(0);
            case 'b':
                if (in_class) return one('\b');
                pos_ = at;
                return error("word boundary '\\b' is not supported");
            case 'B': pos_ = at; return error("word boundary '\\B' is not supported");
            case 'x': case 'u': {
                const size_t n = c == 'x' ? 2 : 4;
                uint32_t cp = 0;
                for (size_t i = 1; i <= n; ++i) {
                    const char h = pos_ + i < p_.size() ? p_[pos_ + i] : '\0';
                    const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (v < 0) {
                        pos_ = at;
                        return error(std::string("malformed '\\") + c + "' escape");
                    }
                    cp = cp * 16 + static_cast<uint32_t>(v);
                }
                pos_ += n + 1;
                return Ranges{{cp, cp}};
            }
            default: break;
        }
        if ((c >= '1' && c <= '9') || c == 'k' || c == '0') {
            pos_ = at;
            return error("backreference '\\" + std::string(1, c) + "' is not supported");
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            pos_ = at;
            return error("unknown escape '\\" + std::string(1, c) + "'");
        }
        const uint32_t cp = next_code_point();  // escaped punctuation or other: itself
        return Ranges{{cp, cp}};
    }

    std::string_view p_;
    RegexGbnfOptions options_;
    GrammarLimits limits_;
    size_t pos_ = 0;
};

}  // namespace

Expected<std::string> regex_to_gbnf(std::string_view pattern, const std::string& name, const RegexGbnfOptions& options,
                                    const GrammarLimits& limits) {
    std::string e;
    TS_ASSIGN_OR_RETURN(e, RegexParser(pattern, options, limits).run());
    return name + " ::= " + e + "\n";
}

Expected<Grammar> compile_regex(std::string_view pattern, const GrammarLimits& limits) {
    std::string text;
    TS_ASSIGN_OR_RETURN(text, regex_to_gbnf(pattern, "root", {}, limits));
    return parse_gbnf(text, limits);
}

}  // namespace tessera
