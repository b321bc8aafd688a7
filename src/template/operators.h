// Python semantics of jinja2 operators on template values: arithmetic,
// comparison, membership, attribute/item lookup, slicing and iteration.
// Errors come back as Status messages; the evaluator adds the line.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "template/value.h"

namespace tessera::jinja {

// The error jinja2 raises when an Undefined is used in an operation.
Status undefined_error(const Value& v);

// op is one of + - * / // % ** ~ ; results larger than max_bytes fail.
Expected<Value> binary_op(const std::string& op, const Value& a, const Value& b, size_t max_bytes);
// op is one of == != < > <= >= in "not in".
Expected<bool> compare_op(const std::string& op, const Value& a, const Value& b);
Expected<bool> contains(const Value& container, const Value& item);

// `obj.name`: a missing attribute is Undefined; an Undefined obj is an error.
Expected<Value> get_attr(const Value& obj, const std::string& name);
// `obj[key]`: a missing key or index out of range is Undefined.
Expected<Value> get_item(const Value& obj, const Value& key);
Expected<Value> slice_value(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                            std::optional<int64_t> step);

// The items a for loop sees: list items, dict keys, string characters.
Expected<ValueList> iterate(const Value& v);
// len(v): code points for strings.
Expected<int64_t> length_of(const Value& v);

}  // namespace tessera::jinja
