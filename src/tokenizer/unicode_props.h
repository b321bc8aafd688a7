// Unicode properties and normalisation the non-BPE tokenizers need (WordPiece's
// BERT normaliser), answered by ICU so tessera carries no tables of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Code points of valid UTF-8 text (the caller repairs invalid input first).
std::vector<uint32_t> utf8_code_points(std::string_view text);

// Canonical decomposition (NFD) of valid UTF-8 text.
std::string nfd(std::string_view text);

bool is_unicode_whitespace(uint32_t cp);  // the White_Space property
bool is_control_char(uint32_t cp);        // Cc, Cf, Co, Cs (not unassigned Cn)
bool is_punctuation_char(uint32_t cp);    // general category P*
bool is_symbol_char(uint32_t cp);         // general category S*
bool is_nonspacing_mark(uint32_t cp);     // general category Mn
uint32_t simple_lowercase(uint32_t cp);   // Unicode simple lowercase mapping

}  // namespace tessera
