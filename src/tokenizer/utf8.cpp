// Strict UTF-8 decoding and repair used by the pre-tokenizer and the
// incremental detokenizer (see utf8.h for the contract of each helper).
#include "tokenizer/utf8.h"

#include "core/check.h"

namespace tessera {

size_t utf8_lead_length(uint8_t lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 1;
}

namespace {

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Allowed range of the second byte for a given lead byte (excludes overlong
// forms, surrogates and code points above U+10FFFF).
void second_byte_range(uint8_t lead, uint8_t* lo, uint8_t* hi) {
    *lo = 0x80;
    *hi = 0xBF;
    if (lead == 0xE0) *lo = 0xA0;
    if (lead == 0xED) *hi = 0x9F;
    if (lead == 0xF0) *lo = 0x90;
    if (lead == 0xF4) *hi = 0x8F;
}

}  // namespace

bool utf8_decode(std::string_view s, size_t pos, uint32_t* cp, size_t* len) {
    if (pos >= s.size()) return false;
    const auto lead = static_cast<uint8_t>(s[pos]);
    if (lead < 0x80) {
        *cp = lead;
        *len = 1;
        return true;
    }
    const size_t n = utf8_lead_length(lead);
    if (n == 1 || s.size() - pos < n) return false;
    uint8_t lo = 0, hi = 0;
    second_byte_range(lead, &lo, &hi);
    const auto second = static_cast<uint8_t>(s[pos + 1]);
    if (second < lo || second > hi) return false;
    uint32_t value = lead & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
        const auto b = static_cast<uint8_t>(s[pos + k]);
        if (!is_continuation(b)) return false;
        value = (value << 6) | (b & 0x3F);
    }
    *cp = value;
    *len = n;
    return true;
}

void utf8_append(std::string& out, uint32_t cp) {
    TS_CHECK(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF));
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

bool utf8_is_valid(std::string_view s) {
    size_t pos = 0;
    while (pos < s.size()) {
        uint32_t cp = 0;
        size_t len = 0;
        if (!utf8_decode(s, pos, &cp, &len)) return false;
        pos += len;
    }
    return true;
}

std::string utf8_sanitize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        uint32_t cp = 0;
        size_t len = 0;
        if (utf8_decode(s, pos, &cp, &len)) {
            out.append(s.substr(pos, len));
            pos += len;
        } else {
            out.append(kReplacementChar);
            pos += 1;
        }
    }
    return out;
}

bool utf8_is_incomplete_prefix(std::string_view s) {
    if (s.empty()) return false;
    const auto lead = static_cast<uint8_t>(s[0]);
    const size_t n = utf8_lead_length(lead);
    if (n == 1 || s.size() >= n) return false;
    if (s.size() >= 2) {
        uint8_t lo = 0, hi = 0;
        second_byte_range(lead, &lo, &hi);
        const auto second = static_cast<uint8_t>(s[1]);
        if (second < lo || second > hi) return false;
    }
    for (size_t k = 2; k < s.size(); ++k) {
        if (!is_continuation(static_cast<uint8_t>(s[k]))) return false;
    }
    return true;
}

}  // namespace tessera
