// Python string semantics over UTF-8: code-point length and slicing,
// whitespace, case mapping, and the exact text of str()/repr() of numbers and
// strings, which templates print and compare byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::jinja {

// Decodes UTF-8; an invalid byte becomes U+FFFD so nothing reads past the end.
std::vector<uint32_t> utf8_decode(std::string_view s);
void utf8_append(uint32_t cp, std::string& out);
std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end);
size_t utf8_length(std::string_view s);

// Python str.isspace() for one code point.
bool is_py_space(uint32_t cp);
// str.strip/lstrip/rstrip: `chars` empty means whitespace.
std::string py_strip(std::string_view s, std::string_view chars, bool left, bool right);
// str.split(sep, maxsplit); empty `sep` means runs of whitespace.
std::vector<std::string> py_split(std::string_view s, std::string_view sep, int64_t maxsplit);
// str.replace(old, new, count); count < 0 means all.
std::string py_replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);

// Case mapping covers ASCII only (documented limitation); other code points pass through.
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_capitalize(std::string_view s);
// str.title(): a letter after a non-letter is upper-cased, others lower-cased.
std::string py_title(std::string_view s);
// jinja2's `title` filter: words start after whitespace or one of -([{<.
std::string jinja_title(std::string_view s);

// repr() of a float: the shortest text that reads back to the same double.
std::string format_float(double d);
// repr() of a str: quotes and escapes chosen as CPython does.
std::string py_repr_string(std::string_view s);
// A JSON string literal as json.dumps(ensure_ascii=False) writes it.
std::string json_quote(std::string_view s);

}  // namespace tessera::jinja
