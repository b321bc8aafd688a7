// Query strings: '&'-separated pairs, application/x-www-form-urlencoded
// escapes. Only what the routes read is decoded, never the whole query.
#include "server/query_string.h"

namespace tessera {
namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] != '%') {
            out += s[i];
        } else {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        }
    }
    return out;
}

}  // namespace

std::optional<std::string> query_param(std::string_view query, std::string_view key) {
    while (!query.empty()) {
        const size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        const size_t eq = pair.find('=');
        const auto name = decode(pair.substr(0, eq));
        if (!name || *name != key) continue;
        return decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    }
    return std::nullopt;
}

}  // namespace tessera
