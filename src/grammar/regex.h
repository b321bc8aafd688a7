// Regular expressions, the ECMAScript subset JSON Schema `pattern` and
// vLLM's guided_regex use, as grammars: literals and escapes (\d \w \s \D \W
// \S \n \r \t \f \v \0 \xHH \uHHHH, escaped punctuation), classes [...]
// with ranges and negation, `.` (any code point but a line terminator),
// groups (...) (?:...) (?<name>...), alternation, * + ? {m} {m,} {m,n} (lazy
// forms match the same strings and are read as greedy), and ^ / $ as the
// pattern's first / last character only. Backreferences, lookaround, word
// boundaries and anchors elsewhere are refused with an error naming the
// construct and its byte offset. Compiled to GBNF text, then parsed like any
// grammar (as JSON Schema is).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "grammar/grammar.h"

namespace tessera {

struct RegexGbnfOptions {
    // JSON Schema's reading: the pattern may match anywhere in the string,
    // so a side without its anchor (^ or $) admits any text there. Off: the
    // whole string must match (^ and $ change nothing).
    bool search = false;
    // Match the strings as the inside of a JSON string literal: each code
    // point in its one canonical JSON form (\" \\ \b \f \n \r \t, \u00xx for
    // other control characters and DEL, anything else as itself).
    bool json_string = false;
};

// GBNF rules defining `name` (and helper rules prefixed with it) for the
// pattern. Limits: max_source_bytes, max_nesting (groups),
// max_repetition ({m,n} bounds).
Expected<std::string> regex_to_gbnf(std::string_view pattern, const std::string& name, const RegexGbnfOptions& options,
                                    const GrammarLimits& limits = {});

// A grammar whose root matches exactly the strings the pattern matches
// whole (guided_regex).
Expected<Grammar> compile_regex(std::string_view pattern, const GrammarLimits& limits = {});

}  // namespace tessera
