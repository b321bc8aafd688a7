// JSON Schema (the common subset) and "any JSON object" as grammars, so
// response_format / guided_json can constrain decoding. The schema is
// translated to GBNF text, then parsed like any GBNF grammar.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "grammar/grammar.h"

namespace tessera {

// Compact JSON (no whitespace between tokens). Supported: type (all seven,
// or a list), properties / required / additionalProperties (false, true or a
// schema; absent means false, as in OpenAI's strict mode; properties in
// their listed order), items, minItems / maxItems, minLength / maxLength,
// pattern (searched, as JSON Schema reads it; src/grammar/regex.h), format
// (date, time, date-time, uuid, email, uri), enum, const, anyOf, oneOf (as anyOf: exclusivity is not enforced), integer
// minimum / exclusiveMinimum of 0 or 1 without a maximum (other bounds are
// refused for now), $ref to
// "#", "#/$defs/..." or "#/definitions/..." (recursive schemas work), and
// annotations (title, description, ...). Any other keyword is an error that
// names it.
Expected<std::string> json_schema_to_gbnf(std::string_view schema_json, const GrammarLimits& limits = {});

// The same without the grammar around it, so several schemas share one
// grammar (a tool call per function): rules defining `name`, helper rules
// named `name`-r<N>, referring to the json-* rules of
// json_primitives_gbnf(), which the caller adds once.
Expected<std::string> json_schema_rules(std::string_view schema_json, const std::string& name,
                                        const GrammarLimits& limits = {});
const char* json_primitives_gbnf();
Expected<Grammar> compile_json_schema(std::string_view schema_json, const GrammarLimits& limits = {});

// Any JSON object (response_format json_object).
Grammar json_object_grammar();

}  // namespace tessera
