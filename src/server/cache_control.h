// Prompt caching with a time-to-live, as clients ask for it: Anthropic-style
// `cache_control: {"type": "ephemeral", "ttl": "5m"}` markers on chat messages
// or their content parts (keep the prompt through the last marked message),
// or on the whole request (keep all of it), and a server-wide option that
// keeps every request's leading system messages. Read here, turned into the
// engine's GenerationRequest::CachePin by the request parser.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "server/api_error.h"
#include "server/json_util.h"

namespace tessera {

struct CacheControlOptions {
    std::chrono::seconds default_ttl{300};  // a marker without "ttl"
    std::chrono::seconds max_ttl{3600};     // a longer "ttl" is a 400
    std::chrono::seconds system_prompt_ttl{0};  // --cache-system-prompt: keep leading system messages (0: off)
};

// Where a request asks its prompt to be kept, and for how long.
struct CacheMark {
    bool whole_prompt = false;   // a request-level marker
    int64_t last_message = -1;   // chat: the last marked message (-1: none)
    std::chrono::seconds ttl{0}; // the longest of the markers' TTLs
    bool any() const { return whole_prompt || last_message >= 0; }
};

// The marker object `marker` ({"type": "ephemeral", "ttl": "5m" | "1h" |
// "<n>s" | "<n>m" | "<n>h" | seconds}) as a TTL, or a 400 naming `param`.
std::optional<ApiError> read_cache_marker(const Json& marker, const CacheControlOptions& options, const char* param,
                                          std::chrono::seconds& ttl);

// The request body's markers: top-level `cache_control`, and for chat, one on
// each message or on any part of a message's content list. The server-wide
// system-prompt option marks the last leading system/developer message.
std::optional<ApiError> find_cache_marks(const Json& body, const CacheControlOptions& options, CacheMark& out);

}  // namespace tessera
