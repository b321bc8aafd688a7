// Reads one parameter of a URL query string (e.g. GET /props?model=NAME),
// percent-decoded; the query is untrusted and malformed escapes are errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// The first `key=value` pair's value, decoded ('+' is a space); nullopt when
// the key is absent or its value is not valid percent-encoding.
std::optional<std::string> query_param(std::string_view query, std::string_view key);

}  // namespace tessera
