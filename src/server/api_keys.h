// Bearer-token authentication: the set of accepted API keys, the check of an
// Authorization header, and the prefix-cache salt each key maps to (so users
// with different keys never share cached prompt blocks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera {

class ApiKeys {
public:
    ApiKeys() = default;  // no keys: authentication is off
    explicit ApiKeys(std::vector<std::string> keys);
    // One key per line; blank lines and lines starting with '#' are skipped.
    static Expected<ApiKeys> from_file(const std::string& path);

    bool enabled() const { return !keys_.empty(); }
    size_t size() const { return keys_.size(); }

    // The cache salt of the key in `authorization` ("Bearer <key>"), or nullopt
    // when it is missing or wrong. With authentication off every request passes
    // with salt 0.
    std::optional<uint64_t> check(std::string_view authorization) const;

private:
    std::vector<std::string> keys_;
};

// The token of an "Authorization: Bearer <token>" header (scheme matched
// case-insensitively, as RFC 7235 says), or nullopt when it has another shape.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// Compares without an early exit, so timing does not reveal a matching prefix.
bool equal_constant_time(std::string_view a, std::string_view b);

// A stable 64-bit hash of a key, never 0 (0 is the unauthenticated domain).
uint64_t cache_salt_for_key(std::string_view key);

}  // namespace tessera
