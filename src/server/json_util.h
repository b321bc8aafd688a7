// The JSON type the server speaks, and the two operations that must never
// throw on untrusted data: measuring nesting depth before parsing, and
// serializing text that may hold invalid UTF-8 (partial byte-level tokens).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tessera {

using Json = nlohmann::json;

// Serializes compactly; invalid UTF-8 in strings becomes U+FFFD instead of an
// exception.
std::string dump_json(const Json& j);

// True when brackets in `text` nest deeper than max_depth (strings and escapes
// are skipped). Checked before parsing so a hostile body never builds a deep tree.
bool json_nesting_exceeds(std::string_view text, int max_depth);

}  // namespace tessera
