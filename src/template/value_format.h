// Converting template values to and from text: Python str()/repr(), the
// JSON that Hugging Face's `tojson` filter writes (json.dumps with
// ensure_ascii=False), and loading request JSON into values.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "template/value.h"

namespace tessera::jinja {

// Deepest container nesting a value may have (JSON input and built values).
inline constexpr uint32_t kMaxValueDepth = 256;

std::string to_str(const Value& v);   // str(v); Undefined prints as ""
std::string to_repr(const Value& v);  // repr(v)

struct JsonStyle {
    std::optional<int> indent;      // json.dumps(indent=...)
    std::string item_separator;     // defaults: ", " without indent, "," with
    std::string key_separator = ": ";
    bool sort_keys = false;
};
JsonStyle default_json_style(std::optional<int> indent);
Expected<std::string> to_json(const Value& v, const JsonStyle& style);

// JSON input (messages, tools) to values; depth-limited, never throws.
Expected<Value> from_json(const nlohmann::ordered_json& j);

}  // namespace tessera::jinja
