// Bearer-token authentication: the set of accepted API keys with their
// settings (key_file.h), the check of an Authorization header, and the
// prefix-cache salt each key maps to (so users with different keys, or of
// different groups, never share cached prompt blocks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/key_file.h"

namespace tessera {

class ApiKeys {
public:
    ApiKeys() = default;  // no keys: authentication is off
    // Bare keys (--api-key), no limits, default names; blank ones are skipped.
    explicit ApiKeys(std::vector<std::string> keys);
    explicit ApiKeys(std::vector<KeySpec> specs) : specs_(std::move(specs)) {}
    // The key file (key_file.h); errors name the file and the line.
    static Expected<ApiKeys> from_file(const std::string& path);

    bool enabled() const { return !specs_.empty(); }
    size_t size() const { return specs_.size(); }
    const std::vector<KeySpec>& specs() const { return specs_; }

    // The index in specs() of the key in `authorization` ("Bearer <key>"), or
    // nullopt when it is missing or wrong. Every key is compared, in constant
    // time, whichever matches.
    std::optional<size_t> find(std::string_view authorization) const;

private:
    std::vector<KeySpec> specs_;
};

// The token of an "Authorization: Bearer <token>" header (scheme matched
// case-insensitively, as RFC 7235 says), or nullopt when it has another shape.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// Compares without an early exit, so timing does not reveal a matching prefix.
bool equal_constant_time(std::string_view a, std::string_view b);

// A stable 64-bit hash of a key, never 0 (0 is the unauthenticated domain).
uint64_t cache_salt_for_key(std::string_view key);
// The prefix-cache domain of a key: its group's when it has one, else its own.
uint64_t cache_salt_for(const KeySpec& spec);

}  // namespace tessera
