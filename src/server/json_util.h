// The JSON type the server speaks, and the operations that must never throw
// or blow up on untrusted data: measuring nesting depth before parsing,
// parsing, and serializing text that may hold invalid UTF-8 (partial
// byte-level tokens).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// Ordered: object members keep the order the client sent them in, so a
// request's tool schemas reach the chat template (Template::render takes this
// type) exactly as written. Responses are built in OpenAI's field order too.
using Json = nlohmann::ordered_json;

// Parses untrusted JSON text; nullopt when it is not valid JSON. Linear in
// the input: nlohmann's own ordered parse looks up every key among its
// object's earlier keys (quadratic: an 8 MB body of one flat object took
// over a minute). A key repeated in one object keeps its first position and
// its last value, as nlohmann::ordered_json::parse does.
std::optional<Json> parse_json(std::string_view text);

// Serializes compactly; invalid UTF-8 in strings becomes U+FFFD instead of an
// exception.
std::string dump_json(const Json& j);

// True when brackets in `text` nest deeper than max_depth (strings and escapes
// are skipped). Checked before parsing so a hostile body never builds a deep tree.
bool json_nesting_exceeds(std::string_view text, int max_depth);

}  // namespace tessera
