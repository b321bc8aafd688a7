// The grammar a forced tool call is decoded under (tool_choice "required" or
// a named function): the family's call syntax around JSON whose "name" is one
// of the allowed functions and whose arguments follow that function's
// parameters schema, so the calls always parse and validate.
#pragma once

#include <string>

#include "core/status.h"
#include "grammar/grammar.h"
#include "server/tool_request.h"
#include "template/tool_calls.h"

namespace tessera {

// GBNF for the request's forced calls: one call, or with parallel_tool_calls
// one to eight. Per family:
//   Hermes   <tool_call>\n{"name":..,"arguments":{..}}\n</tool_call>, calls separated by "\n"
//   Llama3   {"name":..,"parameters":{..}}, calls separated by "; "
//   Mistral  [TOOL_CALLS][{"name":..,"arguments":{..}},...]
//   Generic  {"tool_calls":[{"name":..,"arguments":{..}},...]}
// The JSON is compact (grammar/json_schema.h). Parameter schemas may use
// $ref only into their own $defs / definitions (merged for all tools; a name
// two tools define differently is refused); a keyword json_schema.h does not
// support is refused, naming it and the tool. The DeepSeek family is
// refused (not yet built).
Expected<std::string> tool_call_gbnf(const ToolRequest& tools, ToolCallFamily family,
                                     const GrammarLimits& limits = {});
Expected<Grammar> compile_tool_call_grammar(const ToolRequest& tools, ToolCallFamily family,
                                            const GrammarLimits& limits = {});

}  // namespace tessera
