// Typed, range-checked reads of optional fields from an untrusted JSON object.
// The first bad field is remembered as an OpenAI 400 naming that field, so
// request parsers read every field in a straight line and check once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_error.h"
#include "server/json_util.h"

namespace tessera {

// Parses a request body that must be one JSON object no deeper than max_depth.
std::optional<ApiError> parse_json_object(std::string_view body, int max_depth, Json& out);

class FieldReader {
public:
    explicit FieldReader(const Json& object) : obj_(object) {}

    // The field, or nullptr when absent or JSON null (both mean "default").
    const Json* find(const char* key) const;

    // Each read leaves `out` unchanged when the field is absent or null and
    // returns false once any error has been recorded.
    bool number(const char* key, double lo, double hi, float& out);
    bool integer(const char* key, int64_t lo, int64_t hi, int64_t& out);
    bool integer(const char* key, int64_t lo, int64_t hi, int32_t& out);
    bool boolean(const char* key, bool& out);
    bool string(const char* key, std::string& out);

    void fail(ApiError error);
    bool ok() const { return !error_; }
    const std::optional<ApiError>& error() const { return error_; }

private:
    const Json& obj_;
    std::optional<ApiError> error_;
};

// A JSON number that is a whole number in [lo, hi] (5 and 5.0 both count).
std::optional<int64_t> json_to_int(const Json& v, int64_t lo, int64_t hi);

}  // namespace tessera
