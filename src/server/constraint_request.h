// The structured-output fields of a generation request -> the grammar its
// output must match: OpenAI's response_format (text, json_object,
// json_schema), vLLM's guided_json / guided_grammar / guided_choice /
// guided_regex and llama-server's grammar / json_schema. At most one per
// request; a schema or grammar that does not compile is a 400 naming the field.
#pragma once

#include <optional>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/json_util.h"
#include "server/openai_request.h"

namespace tessera {

// Leaves `out` empty when the request asks for no constraint (or for
// response_format text). Compiles against limits.grammar, through `grammars`
// when given (a constraint seen before is not compiled again, and `out` gets
// its prebuilt token tables); the time taken (compile and table build, or the
// cache lookup) is recorded in `out` for the metrics.
std::optional<ApiError> read_constraint(const Json& body, const ProtocolLimits& limits, GrammarCache* grammars,
                                        GenerationConstraint& out);

// A grammar matching exactly one of `choices` (guided_choice).
Expected<Grammar> choice_grammar(const std::vector<std::string>& choices, const GrammarLimits& limits);

}  // namespace tessera
