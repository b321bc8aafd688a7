// The grammar a forced tool call is decoded under (tool_choice "required" or
// a named function): the family's call syntax around JSON whose "name" is one
// of the allowed functions and whose arguments follow that function's
// parameters schema, so the calls always parse and validate.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "grammar/grammar.h"
#include "server/tool_request.h"
#include "template/tool_calls.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

// GBNF for the request's forced calls: one call, or with parallel_tool_calls
// one to eight. Per family:
//   Hermes          <tool_call>\n{"name":..,"arguments":{..}}\n</tool_call>, calls separated by "\n"
//   Llama3          {"name":..,"parameters":{..}}, calls separated by "; "
//   Mistral         [TOOL_CALLS][{"name":..,"arguments":{..}},...]
//   DeepSeek        <｜tool▁calls▁begin｜> calls separated by "\n" <｜tool▁calls▁end｜>, each
//                   <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{..}\n```<｜tool▁call▁end｜>
//   FunctionaryV31  <function=NAME>{..}</function>, calls separated by "\n"
//   FunctionaryV32  NAME\n{..}, calls separated by ">>>" (the prompt holds the first ">>>")
//   Generic         {"tool_calls":[{"name":..,"arguments":{..}},...]}
// The JSON is compact (grammar/json_schema.h). Each function's parameters
// schema is compiled on its own (its rules named args-<i>-..., so schemas
// never share a rule; its $refs resolve in it); a keyword json_schema.h
// does not support is refused, naming it and the tool.
Expected<std::string> tool_call_gbnf(const ToolRequest& tools, ToolCallFamily family,
                                     const GrammarLimits& limits = {});
// The family's markers (tool_call_markers) that this vocabulary holds as
// control tokens: one token each, without bytes of its own. Decoding under
// the grammar lets them stand for their text (GenerationConstraint::
// marker_tokens), so a forced call opens with the token the model knows.
std::vector<int32_t> tool_call_marker_tokens(const Tokenizer& tokenizer, ToolCallFamily family);

Expected<Grammar> compile_tool_call_grammar(const ToolRequest& tools, ToolCallFamily family,
                                            const GrammarLimits& limits = {});

}  // namespace tessera
