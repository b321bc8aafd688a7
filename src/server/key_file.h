// The API key file: one key per line, optionally followed by settings
// (`KEY name=alice rpm=60 tpm=20000 streams=4 group=teamA`). Untrusted input:
// every bad line is an error naming its line, and no error ever echoes a key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera {

// Per-key limits; 0 means no limit.
struct KeyLimits {
    int64_t rpm = 0;      // requests per minute
    int64_t tpm = 0;      // tokens per minute (prompt + completion)
    int64_t streams = 0;  // requests in flight at once

    bool operator==(const KeyLimits&) const = default;
};

struct KeySpec {
    std::string key;
    std::string name{};   // shown in /metrics and /admin/usage; default "key-<8 hex of a hash>"
    std::string group{};  // keys of one group share a prefix-cache domain; empty: the key's own
    KeyLimits limits{};
};

// The largest accepted values (the token buckets' integer arithmetic fits in
// 64 bits far below these).
inline constexpr int64_t kMaxPerMinute = 10'000'000'000;
inline constexpr int64_t kMaxStreams = 1'000'000;
inline constexpr size_t kMaxKeyFileBytes = size_t{16} << 20;

// Parses a key file's text. Blank lines and lines starting with '#' are
// skipped. Errors: "line N: ..." for a malformed line, a duplicate key or
// name, or a file without keys.
Expected<std::vector<KeySpec>> parse_key_file(std::string_view text);

// The name a key without name= gets: stable across reloads, not the key.
std::string default_key_name(std::string_view key);

}  // namespace tessera
