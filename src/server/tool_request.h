// The tool-calling fields of a chat request: `tools`, `tool_choice` and
// `parallel_tool_calls`, checked and turned into what the template, the
// output parser and the decoding constraint need.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/json_util.h"

namespace tessera {

enum class ToolChoice { None, Auto, Required, Named };

struct ToolRequest {
    // The request's `tools` as sent (key order kept), for the chat template;
    // null when there are none.
    Json tools;
    std::vector<std::string> names;  // function names, in order
    std::vector<Json> parameters;    // each function's parameters schema ({} when absent)
    ToolChoice choice = ToolChoice::None;
    std::string named;              // ToolChoice::Named: the function's name
    bool parallel = true;           // parallel_tool_calls

    // Tools shown to the model and its output parsed for calls. With
    // `tool_choice: "none"` the tools are not shown at all (vLLM by default
    // still renders them; tessera does not offer what the model may not call).
    bool offered() const { return choice != ToolChoice::None; }
    // Decoding must produce a call (Required, Named).
    bool forced() const { return choice == ToolChoice::Required || choice == ToolChoice::Named; }
};

// Reads and checks the fields of `body` (a chat request): every tool a
// {"type": "function", "function": {"name", "description"?, "parameters"?,
// "strict"?}} with a unique name of [A-Za-z0-9_-]{1,64}; tool_choice one of
// "none", "auto", "required" or {"type": "function", "function": {"name"}}
// naming one of them. Default choice: "auto" with tools, "none" without.
std::optional<ApiError> read_tool_request(const Json& body, ToolRequest& out);

}  // namespace tessera
