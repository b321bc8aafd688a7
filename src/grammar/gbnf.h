// GBNF, llama.cpp's grammar format (grammars/README.md there), so grammars
// written for llama-server work unchanged: `name ::= alternatives`, literals,
// character classes, `.`, groups, `* + ? {m} {m,} {m,n}`, `#` comments.
#pragma once

#include <string_view>

#include "core/status.h"
#include "grammar/grammar.h"

namespace tessera {

// Parses GBNF text with `root` as the start rule. Errors name the line and
// column and what was expected there. Left recursion is accepted (the
// matcher is Earley), a superset of llama.cpp.
Expected<Grammar> parse_gbnf(std::string_view text, const GrammarLimits& limits = {});

// The same parse into a builder, for front ends that emit GBNF text and then
// add rules of their own.
Status parse_gbnf_into(std::string_view text, GrammarBuilder& builder);

}  // namespace tessera
