// Tool calls in OpenAI's response shapes: message.tool_calls of a whole
// response, the tool-call deltas of a stream, and the hold-back that keeps a
// call's text out of the streamed content until it can be parsed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/json_util.h"
#include "template/tool_calls.h"

namespace tessera {

// A call's id, unique per (seed, choice, call). Mistral's templates accept
// only 9 alphanumerics when the conversation comes back; others get
// "call_" and 24 alphanumerics, as OpenAI's look.
std::string tool_call_id(ToolCallFamily family, uint64_t seed, int32_t choice, size_t k);

// message.tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}].
Json tool_calls_json(const std::vector<ToolCall>& calls, ToolCallFamily family, uint64_t seed, int32_t choice);

// A stream's delta.tool_calls for call k: its id, type and name with empty
// arguments first, then the arguments (OpenAI sends them in pieces; tessera
// has them whole once parsed).
Json tool_call_head_delta(const ToolCall& call, size_t k, ToolCallFamily family, uint64_t seed, int32_t choice);
Json tool_call_arguments_delta(const ToolCall& call, size_t k);

// One choice's streamed text: content goes out as it comes until a tool call
// may be starting (tool_call_start); from there on the text is held, and
// parsed when the choice ends.
class ToolCallStream {
public:
    explicit ToolCallStream(ToolCallFamily family) : family_(family) {}

    // Appends generated text; returns what can be sent as content now.
    std::string push(std::string_view text);
    // The choice ended: the held text as content and calls.
    ToolCallOutput finish();

private:
    ToolCallFamily family_;
    std::string text_;  // the whole message so far
    size_t sent_ = 0;   // text_[0, sent_) went out as content
};

}  // namespace tessera
