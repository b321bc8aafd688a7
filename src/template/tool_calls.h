// Tool calls in generated text. Each model family writes calls in the syntax
// its chat template taught it; the family is recognised from the template,
// and the text a model generated is split into plain content and calls.
// Text that does not parse as the family's calls stays content: a malformed
// call is never an error, never a crash.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

enum class ToolCallFamily {
    // Templates that know no tools (ChatML, SmolLM2, Gemma, Phi): tessera adds
    // a system prompt (with_generic_tool_prompt) asking for
    // {"tool_calls": [{"name": .., "arguments": {..}}]}; a lone
    // {"name": .., "arguments": {..}} object is accepted too.
    Generic,
    Hermes,   // Hermes, Qwen 2.5: <tool_call>{"name": .., "arguments": {..}}</tool_call>, one per call
    Llama3,   // Llama 3.x: {"name": .., "parameters": {..}}, optionally after <|python_tag|>; ';' between calls
    Mistral,  // Mistral: [TOOL_CALLS][{"name": .., "arguments": {..}, "id"?: ..}, ...]
    // DeepSeek R1 / V3: <｜tool▁calls▁begin｜> then per call
    // <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{..}\n```<｜tool▁call▁end｜>,
    // then <｜tool▁calls▁end｜>.
    DeepSeek,
    // Functionary v3.1 (Llama 3.1 based): <function=NAME>{..}</function> per
    // call, prose around the calls.
    FunctionaryV31,
    // Functionary v3.2: the message is sections, each ">>>RECIPIENT\n" then
    // its text: recipient "all" for prose, a function name for that call's
    // JSON arguments. Its generation prompt ends in ">>>", so the first
    // section comes without it.
    FunctionaryV32,
    // gpt-oss's harmony format: the reply is messages, each
    // [<|start|>assistant][ to=RECIPIENT]<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>json]<|message|>TEXT
    // ended by <|end|> (or <|call|> / <|return|>, which end generation).
    // The final channel (and commentary without a recipient: preambles) is
    // the content, the analysis channel the reasoning, and a
    // message to=functions.NAME is a call with TEXT as its arguments. Its
    // generation prompt ends in "<|start|>assistant". Every reply of such a
    // template goes through this parse, tools or not.
    Harmony,
};

ToolCallFamily tool_call_family(std::string_view template_source);
const char* tool_call_family_name(ToolCallFamily family);
// The fixed marker strings of the family's call syntax (those a vocabulary
// may hold as control tokens: Mistral's [TOOL_CALLS], DeepSeek's five).
std::vector<std::string_view> tool_call_markers(ToolCallFamily family);

struct ToolCall {
    std::string name;
    std::string arguments;  // a JSON object, compact
};

struct ToolCallOutput {
    std::string content;  // the text around the calls (trimmed when there are calls)
    std::vector<ToolCall> calls;
    std::string reasoning{};  // harmony's analysis channel (reasoning_content); empty for the others
};

// Splits generated text into content and calls. No calls: content is the
// text unchanged, except that Functionary v3.2's "all" headers (syntax, not
// prose) are dropped from text that has the v3.2 shape.
ToolCallOutput parse_tool_calls(std::string_view text, ToolCallFamily family);

// Where a tool call may begin in streamed text (the whole message so far):
// the family's opening marker (or a partial one at the end), for Llama 3 the
// start if the message opens with '{' or <|python_tag|>, for Functionary
// v3.2 the start if the message opens with a recipient line (so its text is
// only sent when the message ends: a known limit), else its first ">>>",
// for harmony the start (the message frame is never content),
// for the generic family the first '{' or ``` fence. Text before it can be streamed as
// content, and parse_tool_calls of the text from there finds the same calls
// as of the whole message. text.size() when no call can begin in `text` as
// seen so far; `complete` says no more text follows. `from`: no call starts
// before it (an earlier answer for a shorter text), so a stream's checks
// stay linear in its length.
size_t tool_call_start(std::string_view text, ToolCallFamily family, bool complete, size_t from = 0);

// The messages with the generic family's instructions and the tools'
// definitions added to the system message (one is put first if none is).
nlohmann::ordered_json with_generic_tool_prompt(const nlohmann::ordered_json& messages,
                                                const nlohmann::ordered_json& tools);

}  // namespace tessera
