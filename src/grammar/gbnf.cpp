// GBNF parser: recursive descent over the text, emitting rules into a
// GrammarBuilder. Groups and repetitions become helper rules; every error is
// returned with its line and column, never thrown.
#include "grammar/gbnf.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/utf8.h"

namespace tessera {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class GbnfParser {
public:
    GbnfParser(std::string_view text, GrammarBuilder& b) : s_(text), b_(b) {}

    Status parse() {
        if (s_.size() > b_.limits().max_source_bytes) {
            return Status::error("grammar too large: over " + std::to_string(b_.limits().max_source_bytes) + " bytes");
        }
        skip_space(true);
        while (pos_ < s_.size()) {
            TS_RETURN_IF_ERROR(parse_rule());
            skip_space(true);
        }
        return ok_status();
    }

private:
    Status error(const std::string& what) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        return Status::error("grammar error at line " + std::to_string(line) + ", column " + std::to_string(col) +
                             ": " + what);
    }
    bool at_end() const { return pos_ >= s_.size(); }
    char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }

    // Spaces, tabs and comments; newlines too where a rule may continue.
    void skip_space(bool newline_ok) {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t') {
                ++pos_;
            } else if (c == '#') {
                while (!at_end() && peek() != '\n') ++pos_;
            } else if (newline_ok && (c == '\n' || c == '\r')) {
                ++pos_;
            } else {
                break;
            }
        }
    }

    Expected<std::string> parse_name() {
        const size_t start = pos_;
        while (!at_end() && is_word_char(peek())) ++pos_;
        if (pos_ == start) return error("expected a rule name");
        return std::string(s_.substr(start, pos_ - start));
    }

    Status parse_rule() {
        std::string name;
        TS_ASSIGN_OR_RETURN(name, parse_name());
        skip_space(false);
        if (s_.substr(pos_, 3) != "::=") return error("expected '::=' after rule name '" + name + "'");
        pos_ += 3;
        skip_space(true);
        const uint32_t r = b_.rule(name);
        if (b_.defined(r)) return error("rule '" + name + "' defined twice");
        b_.define(r);
        TS_RETURN_IF_ERROR(parse_alternatives(r, 0));
        if (!at_end() && peek() != '\n' && peek() != '\r') return error("expected end of line after rule");
        return ok_status();
    }

    Status parse_alternatives(uint32_t rule, size_t depth) {
        if (depth > b_.limits().max_nesting) return error("groups nested too deeply");
        while (true) {
            std::vector<GrammarSymbol> seq;
            TS_RETURN_IF_ERROR(parse_sequence(seq, depth));
            TS_RETURN_IF_ERROR(b_.add_alternative(rule, std::move(seq)));
            if (peek() != '|') return ok_status();
            ++pos_;
            skip_space(true);
        }
    }

    // One sequence; inside a group it may span lines, at the top it ends at a newline.
    Status parse_sequence(std::vector<GrammarSymbol>& seq, size_t depth) {
        const bool nested = depth > 0;
        while (!at_end()) {
            const char c = peek();
            const size_t element_start = seq.size();
            if (c == '"') {
                ++pos_;
                TS_RETURN_IF_ERROR(parse_literal(seq));
            } else if (c == '[') {
                ++pos_;
                GrammarSymbol sym;
                TS_ASSIGN_OR_RETURN(sym, parse_class());
                seq.push_back(sym);
            } else if (c == '.') {
                ++pos_;
                GrammarSymbol sym;
                TS_ASSIGN_OR_RETURN(sym, b_.code_point_ranges({{0, 0x10FFFF}}));
                seq.push_back(sym);
            } else if (c == '(') {
                ++pos_;
                skip_space(true);
                const uint32_t g = b_.new_rule("group");
                TS_RETURN_IF_ERROR(parse_alternatives(g, depth + 1));
                if (peek() != ')') return error("expected ')'");
                ++pos_;
                seq.push_back(GrammarBuilder::ref(g));
            } else if (is_word_char(c)) {
                std::string name;
                TS_ASSIGN_OR_RETURN(name, parse_name());
                seq.push_back(GrammarBuilder::ref(b_.rule(name)));
            } else if (c == '<' || c == '!') {
                return error("token references (<...>) are not supported");
            } else {
                break;
            }
            skip_space(nested);
            TS_RETURN_IF_ERROR(parse_postfix(seq, element_start, nested));
        }
        return ok_status();
    }

    // Applies `* + ? {m,n}` to the element that starts at seq[start].
    Status parse_postfix(std::vector<GrammarSymbol>& seq, size_t start, bool nested) {
        const char c = peek();
        if (c != '*' && c != '+' && c != '?' && c != '{') return ok_status();
        if (seq.size() == start) return error("repetition of nothing");
        uint32_t min = 0, max = GrammarBuilder::kUnbounded;
        ++pos_;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
        if (c == '{') TS_RETURN_IF_ERROR(parse_bounds(min, max));
        GrammarSymbol element = seq[start];
        if (seq.size() - start > 1) {  // a multi-byte literal: repeat it as one unit
            const uint32_t lit = b_.new_rule("literal");
            TS_RETURN_IF_ERROR(b_.add_alternative(lit, {seq.begin() + static_cast<long>(start), seq.end()}));
            element = GrammarBuilder::ref(lit);
        }
        seq.resize(start);
        GrammarSymbol rep;
        TS_ASSIGN_OR_RETURN(rep, b_.repeat(element, min, max));
        seq.push_back(rep);
        skip_space(nested);
        const char next = peek();
        if (next == '*' || next == '+' || next == '?' || next == '{') return error("repetition of a repetition");
        return ok_status();
    }

    Expected<uint32_t> parse_int() {
        const size_t start = pos_;
        uint64_t v = 0;
        while (!at_end() && peek() >= '0' && peek() <= '9') {
            v = v * 10 + static_cast<uint64_t>(peek() - '0');
            if (v > b_.limits().max_repetition) return error("repetition bound too large");
            ++pos_;
        }
        if (pos_ == start) return error("expected a number");
        return static_cast<uint32_t>(v);
    }

    Status parse_bounds(uint32_t& min, uint32_t& max) {
        skip_space(false);
        TS_ASSIGN_OR_RETURN(min, parse_int());
        skip_space(false);
        if (peek() == '}') {
            max = min;
        } else {
            if (peek() != ',') return error("expected ',' or '}' in repetition bounds");
            ++pos_;
            skip_space(false);
            if (peek() != '}') {
                TS_ASSIGN_OR_RETURN(max, parse_int());
                if (max < min) return error("repetition maximum below minimum");
                skip_space(false);
            }
            if (peek() != '}') return error("expected '}'");
        }
        ++pos_;
        return ok_status();
    }

    // One code point of a literal or class: an escape or a UTF-8 character.
    Expected<uint32_t> parse_char() {
        if (at_end()) return error("unexpected end of grammar");
        const auto c = static_cast<unsigned char>(peek());
        if (c == '\\') {
            ++pos_;
            const char e = peek();
            ++pos_;
            switch (e) {
                case 'n': return uint32_t{'\n'};
                case 'r': return uint32_t{'\r'};
                case 't': return uint32_t{'\t'};
                case '\\': case '"': case '[': case ']': case '-': case '^': return static_cast<uint32_t>(e);
                case 'x': return parse_hex(2);
                case 'u': return parse_hex(4);
                case 'U': return parse_hex(8);
                default: pos_ -= 2; return error("unknown escape '\\" + std::string(1, e) + "'");
            }
        }
        const int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || pos_ + static_cast<size_t>(len) > s_.size()) return error("invalid UTF-8");
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        for (int i = 1; i < len; ++i) {
            const auto cc = static_cast<unsigned char>(s_[pos_ + static_cast<size_t>(i)]);
            if ((cc & 0xC0) != 0x80) return error("invalid UTF-8");
            cp = (cp << 6) | (cc & 0x3F);
        }
        pos_ += static_cast<size_t>(len);
        return cp;
    }

    Expected<uint32_t> parse_hex(int digits) {
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
            const char h = peek();
            int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) return error("expected " + std::to_string(digits) + " hex digits");
            v = v * 16 + static_cast<uint32_t>(d);
            ++pos_;
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return error("escape is not a Unicode scalar value");
        return v;
    }

    Status parse_literal(std::vector<GrammarSymbol>& seq) {
        while (peek() != '"') {
            if (at_end()) return error("unterminated string literal");
            uint32_t cp;
            TS_ASSIGN_OR_RETURN(cp, parse_char());
            std::string utf8;
            utf8_append(utf8, cp);
            b_.append_literal(utf8, seq);
        }
        ++pos_;
        return ok_status();
    }

    // After '[': ranges until ']', optionally negated with a leading '^'.
    Expected<GrammarSymbol> parse_class() {
        const bool negated = peek() == '^';
        if (negated) ++pos_;
        std::vector<std::pair<uint32_t, uint32_t>> ranges;
        while (peek() != ']') {
            if (at_end()) return error("unterminated character class");
            uint32_t lo, hi;
            TS_ASSIGN_OR_RETURN(lo, parse_char());
            hi = lo;
            if (peek() == '-' && peek(1) != ']' && pos_ + 1 < s_.size()) {
                ++pos_;
                TS_ASSIGN_OR_RETURN(hi, parse_char());
                if (hi < lo) return error("character range out of order");
            }
            ranges.emplace_back(lo, hi);
        }
        ++pos_;
        if (negated) ranges = complement(std::move(ranges));
        if (ranges.empty()) return error("character class matches nothing");
        return b_.code_point_ranges(ranges);
    }

    static std::vector<std::pair<uint32_t, uint32_t>> complement(std::vector<std::pair<uint32_t, uint32_t>> in) {
        std::sort(in.begin(), in.end());
        std::vector<std::pair<uint32_t, uint32_t>> out;
        uint32_t next = 0;
        for (auto [lo, hi] : in) {
            if (lo > next) out.emplace_back(next, lo - 1);
            next = std::max(next, hi + 1);
        }
        if (next <= 0x10FFFF) out.emplace_back(next, 0x10FFFF);
        return out;
    }

    std::string_view s_;
    GrammarBuilder& b_;
    size_t pos_ = 0;
};

}  // namespace

Status parse_gbnf_into(std::string_view text, GrammarBuilder& builder) { return GbnfParser(text, builder).parse(); }

Expected<Grammar> parse_gbnf(std::string_view text, const GrammarLimits& limits) {
    GrammarBuilder b(limits);
    TS_RETURN_IF_ERROR(parse_gbnf_into(text, b));
    return b.build("root");
}

}  // namespace tessera
