// jinja2-compatible tokenizer (see lexer.h). Whitespace control is applied to
// text tokens here so the parser and evaluator never think about it.
#include "template/lexer.h"

#include <cstdlib>
#include <cstring>

#include "template/text_util.h"

namespace tessera::jinja {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

std::string normalize_source(const std::string& in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\r') {
            out += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            out += in[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
    return out;
}

class Lexer {
public:
    Lexer(std::string src, const LexOptions& opts) : src_(std::move(src)), opts_(opts) {}
    Expected<std::vector<Token>> run();

private:
    Status error(const std::string& msg) const {
        return Status::error("template syntax error at line " + std::to_string(line_) + ": " + msg);
    }
    void emit(TokenType type, std::string text, int line) { tokens_.push_back({type, std::move(text), line}); }
    void emit_text(std::string text, char kind, char mod, int line);
    void advance_to(size_t pos);
    Status lex_comment();
    Status lex_tag(char kind);
    Status lex_token();
    Status lex_string();
    Status lex_number();
    Status lex_raw_body();
    void after_tag(char mod, bool is_block);
    bool at(const char* s) const { return src_.compare(pos_, std::strlen(s), s) == 0; }

    std::string src_;
    LexOptions opts_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;
    std::vector<Token> tokens_;
};

void Lexer::advance_to(size_t pos) {
    for (; pos_ < pos && pos_ < src_.size(); ++pos_) {
        if (src_[pos_] == '\n') ++line_;
    }
}

void Lexer::emit_text(std::string text, char kind, char mod, int line) {
    if (mod == '-') {
        while (!text.empty() && is_ws(text.back())) text.pop_back();
    } else if (kind != '{' && mod != '+' && opts_.lstrip_blocks) {
        const size_t nl = text.rfind('\n');
        const size_t line_pos = nl == std::string::npos ? 0 : nl + 1;
        bool only_ws = true;
        for (size_t i = line_pos; i < text.size(); ++i) {
            if (!is_ws(text[i])) only_ws = false;
        }
        if (only_ws && (line_pos > 0 || line_starting_)) text.resize(line_pos);
    }
    if (!text.empty()) emit(TokenType::Text, std::move(text), line);
}

void Lexer::after_tag(char mod, bool is_block) {
    if (mod == '-') {
        size_t p = pos_;
        while (p < src_.size() && is_ws(src_[p])) ++p;
        line_starting_ = p > pos_ ? src_[p - 1] == '\n' : false;
        advance_to(p);
    } else if (is_block && mod != '+' && opts_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
        advance_to(pos_ + 1);
        line_starting_ = true;
    } else {
        line_starting_ = false;
    }
}

Status Lexer::lex_comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) return error("unterminated comment");
    const char mod = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    advance_to(end + 2);
    after_tag(mod, true);
    return ok_status();
}

Status Lexer::lex_tag(char kind) {
    const std::string close = kind == '{' ? "}}" : "%}";
    const size_t first_token = tokens_.size();
    emit(kind == '{' ? TokenType::VarBegin : TokenType::BlockBegin, "", line_);
    int depth = 0;
    while (true) {
        while (pos_ < src_.size() && is_ws(src_[pos_])) advance_to(pos_ + 1);
        if (pos_ >= src_.size()) return error("unclosed tag (missing '" + close + "')");
        if (depth == 0) {
            char mod = 0;
            if ((src_[pos_] == '-' || (src_[pos_] == '+' && kind == '%')) &&
                src_.compare(pos_ + 1, 2, close) == 0) {
                mod = src_[pos_];
                advance_to(pos_ + 1);
            }
            if (src_.compare(pos_, 2, close) == 0) {
                emit(kind == '{' ? TokenType::VarEnd : TokenType::BlockEnd, "", line_);
                advance_to(pos_ + 2);
                after_tag(mod, kind == '%');
                break;
            }
        }
        const char c = src_[pos_];
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        TS_RETURN_IF_ERROR(lex_token());
    }
    const bool is_raw = kind == '%' && tokens_.size() == first_token + 3 &&
                        tokens_[first_token + 1].type == TokenType::Name && tokens_[first_token + 1].text == "raw";
    if (!is_raw) return ok_status();
    tokens_.resize(first_token);
    return lex_raw_body();
}

// After `{% raw %}`: everything up to `{% endraw %}` is text.
Status Lexer::lex_raw_body() {
    size_t search = pos_;
    while (true) {
        const size_t open = src_.find("{%", search);
        if (open == std::string::npos) return error("missing {% endraw %}");
        size_t p = open + 2;
        const char mod = p < src_.size() && (src_[p] == '-' || src_[p] == '+') ? src_[p] : 0;
        if (mod) ++p;
        while (p < src_.size() && is_ws(src_[p])) ++p;
        if (src_.compare(p, 6, "endraw") != 0) {
            search = open + 2;
            continue;
        }
        p += 6;
        while (p < src_.size() && is_ws(src_[p])) ++p;
        char end_mod = 0;
        if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) end_mod = src_[p++];
        if (src_.compare(p, 2, "%}") != 0) return error("malformed {% endraw %}");
        const int text_line = line_;
        emit_text(src_.substr(pos_, open - pos_), '%', mod, text_line);
        advance_to(p + 2);
        after_tag(end_mod, true);
        return ok_status();
    }
}

Status Lexer::lex_token() {
    const char c = src_[pos_];
    if (c == '"' || c == '\'') return lex_string();
    if (is_digit(c)) return lex_number();
    if (is_name_start(c)) {
        size_t e = pos_;
        while (e < src_.size() && is_name_char(src_[e])) ++e;
        emit(TokenType::Name, src_.substr(pos_, e - pos_), line_);
        advance_to(e);
        return ok_status();
    }
    static const char* const two_char[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : two_char) {
        if (at(op)) {
            emit(TokenType::Operator, op, line_);
            advance_to(pos_ + 2);
            return ok_status();
        }
    }
    if (std::strchr("+-*/%~<>=()[]{},.:|", c) != nullptr && c != '\0') {
        emit(TokenType::Operator, std::string(1, c), line_);
        advance_to(pos_ + 1);
        return ok_status();
    }
    return error(std::string("unexpected character '") + c + "'");
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Reads `n` hex digits at s[i..]; -1 if they are not all hex.
long read_hex(const std::string& s, size_t i, int n) {
    long v = 0;
    for (int k = 0; k < n; ++k) {
        if (i + static_cast<size_t>(k) >= s.size()) return -1;
        const int h = hex_value(s[i + static_cast<size_t>(k)]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

Status Lexer::lex_string() {
    const char quote = src_[pos_];
    const int start_line = line_;
    std::string value;
    size_t p = pos_ + 1;
    while (true) {
        if (p >= src_.size()) return error("unterminated string literal");
        const char c = src_[p];
        if (c == quote) break;
        if (c != '\\' || p + 1 >= src_.size()) {
            value += c;
            ++p;
            continue;
        }
        const char e = src_[p + 1];
        p += 2;
        const char* simple = std::strchr("\\'\"abfnrtv\n", e);
        if (simple != nullptr && e != '\0') {
            static const char mapped[] = "\\'\"\a\b\f\n\r\t\v";
            if (e != '\n') value += mapped[simple - "\\'\"abfnrtv\n"];
            continue;
        }
        const int width = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (width > 0) {
            const long cp = read_hex(src_, p, width);
            if (cp < 0 || cp > 0x10FFFF) return error("invalid \\" + std::string(1, e) + " escape in string");
            utf8_append(static_cast<uint32_t>(cp), value);
            p += static_cast<size_t>(width);
        } else if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int k = 0; k < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++k) v = v * 8 + (src_[p++] - '0');
            utf8_append(static_cast<uint32_t>(v), value);
        } else {
            value += '\\';
            value += e;
        }
    }
    emit(TokenType::String, std::move(value), start_line);
    advance_to(p + 1);
    return ok_status();
}

Status Lexer::lex_number() {
    size_t e = pos_;
    std::string digits;
    auto take_digits = [&] {
        while (e < src_.size() && (is_digit(src_[e]) || (src_[e] == '_' && e + 1 < src_.size() && is_digit(src_[e + 1])))) {
            if (src_[e] != '_') digits += src_[e];
            ++e;
        }
    };
    take_digits();
    bool is_float = false;
    const bool after_dot = !tokens_.empty() && tokens_.back().type == TokenType::Operator && tokens_.back().text == ".";
    if (!after_dot && e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
        is_float = true;
        digits += '.';
        ++e;
        take_digits();
    }
    if (!after_dot && e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
        size_t q = e + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        if (q < src_.size() && is_digit(src_[q])) {
            is_float = true;
            digits += 'e';
            digits.append(src_, e + 1, q - e - 1);
            e = q;
            take_digits();
        }
    }
    if (!is_float && digits.size() > 18) return error("integer literal too large: " + digits);
    emit(is_float ? TokenType::Float : TokenType::Integer, digits, line_);
    advance_to(e);
    return ok_status();
}

Expected<std::vector<Token>> Lexer::run() {
    while (pos_ < src_.size()) {
        size_t start = std::string::npos;
        for (size_t p = src_.find('{', pos_); p != std::string::npos; p = src_.find('{', p + 1)) {
            if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) {
                start = p;
                break;
            }
        }
        const int text_line = line_;
        if (start == std::string::npos) {
            emit_text(src_.substr(pos_), '{', 0, text_line);
            advance_to(src_.size());
            break;
        }
        const char kind = src_[start + 1];
        const char mod = start + 2 < src_.size() && (src_[start + 2] == '-' || src_[start + 2] == '+') ? src_[start + 2] : 0;
        emit_text(src_.substr(pos_, start - pos_), kind, mod, text_line);
        advance_to(start + 2 + (mod ? 1 : 0));
        TS_RETURN_IF_ERROR(kind == '#' ? lex_comment() : lex_tag(kind));
    }
    emit(TokenType::End, "", line_);
    return std::move(tokens_);
}

}  // namespace

Expected<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options) {
    Lexer lexer(normalize_source(source), options);
    return lexer.run();
}

}  // namespace tessera::jinja
