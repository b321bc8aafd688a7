// The shapes a conversation with tool calls can be handed to a chat template
// in. Templates disagree: most (transformers' convention: Llama 3.1, Qwen,
// Hermes) read a call's `arguments` as a mapping, some (DeepSeek) concatenate
// it as a string, and many (ChatML-style, Gemma, Phi) know no tool calls at
// all and fail on `content: null`. ChatTemplate::render tries these in order.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

// JSON that a client or a model wrote for a tool call, parsed under caps
// (nesting 64, 4096 keys in all): the ordered parse looks each key up among
// its object's earlier ones (quadratic in an object's size), and deep values
// would make later recursive walks (dump, template values) deep. A discarded
// value when the text is not JSON or is past the caps.
nlohmann::ordered_json parse_tool_json(std::string_view text);

enum class ToolMessageForm {
    // Each call's `arguments`, when a string holding a JSON object, as that
    // object (what transformers and vLLM pass).
    Objects,
    // Each call's `arguments` as a JSON string (objects serialized compactly).
    Strings,
    // Objects, with a null content as "" (gpt-oss's template tests
    // `"..." in message.content`, which fails on null in jinja2 too); tried
    // only for templates that read tool_calls.
    ObjectsEmptyContent,
    // No tool syntax left for the template: an assistant's calls appended to
    // its content as `{"tool_calls":[{"name":..,"arguments":{..}}]}` (the
    // generic format, see tool_calls.h), a run of `tool` messages as one user
    // message of `{"tool_response":{..}}` lines, null content as "".
    Plain,
};

// True when some message carries tool calls, has the `tool` role, or has
// null or absent content: the cases where the forms above differ.
bool has_tool_messages(const nlohmann::ordered_json& messages);

// The messages (an array of objects, as ChatRenderInput holds after
// validation) in the given form.
nlohmann::ordered_json tool_message_form(const nlohmann::ordered_json& messages, ToolMessageForm form);

}  // namespace tessera
