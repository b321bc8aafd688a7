// Python string semantics over UTF-8 (see text_util.h). Everything here works
// on code points so that lengths and slices match what jinja2 computes.
#include "template/text_util.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tessera::jinja {

std::vector<uint32_t> utf8_decode(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        const int n = b0 < 0x80 ? 0 : (b0 >> 5) == 6 ? 1 : (b0 >> 4) == 14 ? 2 : (b0 >> 3) == 30 ? 3 : -1;
        if (n == 0) {
            out.push_back(b0);
            ++i;
            continue;
        }
        if (n < 0 || i + static_cast<size_t>(n) >= s.size()) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        uint32_t cp = b0 & (0x3F >> n);
        bool ok = true;
        for (int k = 1; k <= n; ++k) {
            const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
            if ((b & 0xC0) != 0x80) ok = false;
            cp = (cp << 6) | (b & 0x3F);
        }
        if (!ok) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(cp);
        i += static_cast<size_t>(n) + 1;
    }
    return out;
}

void utf8_append(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
    std::string out;
    for (size_t i = begin; i < end && i < cps.size(); ++i) utf8_append(cps[i], out);
    return out;
}

size_t utf8_length(std::string_view s) {
    size_t n = 0;
    for (char c : s) {
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    }
    return n;
}

bool is_py_space(uint32_t cp) {
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F)) return true;
    if (cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A)) return true;
    return cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string py_strip(std::string_view s, std::string_view chars, bool left, bool right) {
    const std::vector<uint32_t> cps = utf8_decode(s);
    const std::vector<uint32_t> set = utf8_decode(chars);
    auto strip_it = [&](uint32_t cp) {
        if (set.empty()) return is_py_space(cp);
        for (uint32_t c : set) {
            if (c == cp) return true;
        }
        return false;
    };
    size_t b = 0, e = cps.size();
    while (left && b < e && strip_it(cps[b])) ++b;
    while (right && e > b && strip_it(cps[e - 1])) --e;
    return utf8_encode(cps, b, e);
}

static std::vector<std::string> split_whitespace(std::string_view s, int64_t maxsplit) {
    const std::vector<uint32_t> cps = utf8_decode(s);
    std::vector<std::string> out;
    size_t i = 0;
    while (i < cps.size()) {
        while (i < cps.size() && is_py_space(cps[i])) ++i;
        if (i == cps.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
            size_t e = cps.size();
            while (e > i && is_py_space(cps[e - 1])) --e;
            out.push_back(utf8_encode(cps, i, e));
            break;
        }
        size_t j = i;
        while (j < cps.size() && !is_py_space(cps[j])) ++j;
        out.push_back(utf8_encode(cps, i, j));
        i = j;
    }
    return out;
}

std::vector<std::string> py_split(std::string_view s, std::string_view sep, int64_t maxsplit) {
    if (sep.empty()) return split_whitespace(s, maxsplit);
    std::vector<std::string> out;
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
        const size_t hit = s.find(sep, pos);
        if (hit == std::string_view::npos) break;
        out.emplace_back(s.substr(pos, hit - pos));
        pos = hit + sep.size();
    }
    out.emplace_back(s.substr(pos));
    return out;
}

std::string py_replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
    std::string out;
    if (from.empty()) {
        // Python inserts `to` around every code point.
        const std::vector<uint32_t> cps = utf8_decode(s);
        int64_t done = 0;
        for (size_t i = 0; i <= cps.size(); ++i) {
            if (count < 0 || done < count) {
                out += to;
                ++done;
            }
            if (i < cps.size()) utf8_append(cps[i], out);
        }
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        const size_t hit = s.find(from, pos);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(pos, hit - pos));
        out.append(to);
        pos = hit + from.size();
        ++done;
    }
    out.append(s.substr(pos));
    return out;
}

static bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static char to_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
static char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

std::string py_upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_upper(c);
    return out;
}

std::string py_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_lower(c);
    return out;
}

std::string py_capitalize(std::string_view s) {
    std::string out = py_lower(s);
    if (!out.empty()) out[0] = to_upper(out[0]);
    return out;
}

std::string py_title(std::string_view s) {
    std::string out(s);
    bool prev_letter = false;
    for (char& c : out) {
        const bool letter = is_ascii_alpha(c) || (static_cast<unsigned char>(c) >= 0x80);
        if (is_ascii_alpha(c)) c = prev_letter ? to_lower(c) : to_upper(c);
        prev_letter = letter;
    }
    return out;
}

std::string jinja_title(std::string_view s) {
    std::string out(s);
    bool word_start = true;
    for (char& c : out) {
        const bool sep = c == ' ' || (c >= '\t' && c <= '\r') || c == '-' || c == '(' || c == '{' ||
                         c == '[' || c == '<';
        if (sep) {
            word_start = true;
            continue;
        }
        c = word_start ? to_upper(c) : to_lower(c);
        word_start = false;
    }
    return out;
}

std::string format_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    int prec = 1;
    for (; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    // buf is "-d.ddde±XX": split into digits and exponent.
    std::string text(buf);
    const bool neg = text[0] == '-';
    if (neg) text.erase(0, 1);
    const size_t epos = text.find('e');
    const int exp10 = std::atoi(text.c_str() + epos + 1);
    std::string digits;
    for (size_t i = 0; i < epos; ++i) {
        if (text[i] != '.') digits += text[i];
    }
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    const int decpt = exp10 + 1;
    std::string out = neg ? "-" : "";
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out.append("0.").append(static_cast<size_t>(-decpt), '0').append(digits);
        } else if (static_cast<size_t>(decpt) >= digits.size()) {
            out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
        } else {
            out.append(digits, 0, static_cast<size_t>(decpt)).append(".").append(digits, static_cast<size_t>(decpt));
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
    std::snprintf(buf, sizeof buf, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    return out + buf;
}

static bool py_printable(uint32_t cp) {
    if (cp < 0x20 || cp == 0x7F) return false;
    if (cp >= 0x80 && cp < 0xA0) return false;
    if (cp == 0xAD || cp == 0x2028 || cp == 0x2029) return false;
    return !is_py_space(cp) || cp == ' ';
}

std::string py_repr_string(std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    char buf[16];
    for (uint32_t cp : utf8_decode(s)) {
        if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (py_printable(cp)) {
            utf8_append(cp, out);
        } else {
            const char* fmt = cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x";
            std::snprintf(buf, sizeof buf, fmt, cp);
            out += buf;
        }
    }
    out += quote;
    return out;
}

std::string json_quote(std::string_view s) {
    std::string out = "\"";
    char buf[8];
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
    return out;
}

}  // namespace tessera::jinja
