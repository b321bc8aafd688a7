// API key loading and constant-time checking.
#include "server/api_keys.h"

#include <fstream>
#include <utility>

namespace tessera {
namespace {

std::string_view trim(std::string_view s) {
    const char* ws = " \t\r\n";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

bool equal_constant_time(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
    // RFC 7235: the auth scheme is case-insensitive ("bearer", "BEARER"), and
    // one or more spaces separate it from the token.
    constexpr std::string_view kBearer = "bearer";
    if (authorization.size() <= kBearer.size() || authorization[kBearer.size()] != ' ') return std::nullopt;
    for (size_t i = 0; i < kBearer.size(); ++i) {
        const char c = authorization[i];
        if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kBearer[i]) return std::nullopt;
    }
    return trim(authorization.substr(kBearer.size()));
}

ApiKeys::ApiKeys(std::vector<std::string> keys) {
    for (std::string& k : keys) {
        const std::string_view t = trim(k);
        if (t.empty()) continue;
        KeySpec spec{.key = std::string(t), .name = default_key_name(t)};
        specs_.push_back(std::move(spec));
    }
}

Expected<ApiKeys> ApiKeys::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::error("cannot read API key file '" + path + "'");
    std::string text;
    char chunk[65536];
    while (text.size() <= kMaxKeyFileBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
        text.append(chunk, static_cast<size_t>(in.gcount()));
    }
    auto specs = parse_key_file(text);
    if (!specs) return Status::error("API key file '" + path + "': " + specs.error());
    return ApiKeys(std::move(*specs));
}

std::optional<size_t> ApiKeys::find(std::string_view authorization) const {
    const std::optional<std::string_view> presented = bearer_token(authorization);
    if (!presented) return std::nullopt;
    std::optional<size_t> found;
    for (size_t i = 0; i < specs_.size(); ++i) {
        if (equal_constant_time(specs_[i].key, *presented)) found = i;
    }
    return found;
}

uint64_t cache_salt_for_key(std::string_view key) {
    uint64_t h = 14695981039346656037ull;  // FNV-1a
    for (char c : key) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h == 0 ? 1 : h;
}

uint64_t cache_salt_for(const KeySpec& spec) {
    // A key holds no blank, so "group <name>" is never some key's own salt.
    return spec.group.empty() ? cache_salt_for_key(spec.key) : cache_salt_for_key("group " + spec.group);
}

}  // namespace tessera
