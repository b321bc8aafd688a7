// OpenAI's Responses API (POST /v1/responses), text in and text out: the
// request is translated into the chat-completions body the chat parser already
// validates, and the result is written as a `response` object or as the
// Responses stream's typed events. Features it does not carry (tools,
// reasoning, stored conversations) are refused with a 400
// naming the field, never ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/json_util.h"
#include "server/openai_response.h"

namespace tessera {

// Builds the equivalent chat-completions body: `instructions` as a system
// message, `input` (a string, or a list of messages whose content is a
// string or input_text/output_text parts) as the conversation,
// max_output_tokens as max_tokens, text.format (text, json_object,
// json_schema) as response_format; temperature, top_p, seed, stream, model
// carried over.
std::optional<ApiError> responses_to_chat_body(const Json& body, Json& chat_body);

// What the response object echoes of its request.
struct ResponsesEcho {
    Json instructions;        // null or the string
    Json max_output_tokens;   // null or the number
    double temperature = 1.0;
    double top_p = 1.0;
    Json text_format = {{"type", "text"}};  // text.format as sent
};
ResponsesEcho responses_echo(const Json& body);

// The ids of one response: "resp_..." and its one message item "msg_...".
struct ResponseIds {
    std::string response;
    std::string message;
};

// The `response` object. status: "in_progress", "completed" or "incomplete"
// (the last when finish is Length: incomplete_details.reason =
// "max_output_tokens"); text: the output so far (no output item while empty
// and in progress).
Json response_object(const ResponseMeta& meta, const ResponseIds& ids, const ResponsesEcho& echo,
                     const std::string& text, FinishReason finish, const UsageCounts* usage);

// One event of the stream: `event: TYPE` + `data: {...,"type":TYPE,"sequence_number":N}`.
std::string responses_event(const std::string& type, Json data, int64_t& sequence);

// The message output item; content empty until the text is final.
Json message_item(const ResponseIds& ids, const std::string* final_text);
Json output_text_part(const std::string& text);

}  // namespace tessera
