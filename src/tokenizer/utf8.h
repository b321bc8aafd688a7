// UTF-8 helpers for the tokenizers: strict decoding, encoding, and repair of
// invalid input. Prompt text is untrusted, so every reader here is bounds-checked
// and treats malformed sequences as data, never as a reason to crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

// U+FFFD REPLACEMENT CHARACTER, encoded.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length of the sequence announced by a lead byte (1..4), or 1 for a byte that
// cannot start a sequence (continuation bytes, 0xF8..0xFF).
size_t utf8_lead_length(uint8_t lead);

// Decodes the code point starting at `pos`. Strict: rejects truncated
// sequences, bad continuation bytes, overlong forms, surrogates and values
// above U+10FFFF. On success stores the code point and its byte length.
bool utf8_decode(std::string_view s, size_t pos, uint32_t* cp, size_t* len);

// Appends the UTF-8 encoding of `cp` (which must be a valid scalar value).
void utf8_append(std::string& out, uint32_t cp);

bool utf8_is_valid(std::string_view s);

// Copies `s`, replacing every byte that does not start a valid sequence with
// U+FFFD (one replacement per bad byte, as llama.cpp does).
std::string utf8_sanitize(std::string_view s);

// True when `s` (1..3 bytes) could still become a valid sequence if more bytes
// followed: a correct lead byte and correct continuation bytes so far.
bool utf8_is_incomplete_prefix(std::string_view s);

}  // namespace tessera
