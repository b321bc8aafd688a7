// Engine results -> OpenAI response JSON: chat.completion, chat.completion.chunk
// and text_completion objects, usage, logprobs in both of OpenAI's formats,
// and the Server-Sent Events framing used when streaming.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/json_util.h"
#include "server/openai_request.h"
#include "template/tool_calls.h"

namespace tessera {

// The bytes a token id stands for (partial UTF-8 allowed); the tokenizer's
// token_to_piece in the server, a table in tests.
using TokenPieceFn = std::function<std::string(int32_t)>;

struct ResponseMeta {
    ApiKind kind = ApiKind::Chat;
    std::string id{};     // "chatcmpl-..." or "cmpl-..."
    int64_t created = 0;  // unix seconds
    std::string model{};
    bool logprobs = false;  // the request asked for logprobs
    bool tokens_as_ids = false;  // logprobs name tokens "token_id:N" (ParsedRequest)
    // Chat with tools offered: the output is parsed for calls in this family.
    std::optional<ToolCallFamily> tool_family{};
    uint64_t tool_call_seed = 0;  // tool call ids derive from it
};

struct UsageCounts {
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t cache_write_tokens = 0;  // prompt tokens stored under the request's cache pin
};

// One finished choice of a non-streaming response.
struct ChoiceResult {
    std::string text;
    FinishReason finish = FinishReason::None;
    std::vector<TokenLogprob> logprobs;
    std::vector<ToolCall> tool_calls{};  // parsed out of text; finish_reason "tool_calls"
    std::string reasoning{};             // message.reasoning_content (harmony's analysis channel)
};

// A fresh response id with the kind's prefix.
std::string make_response_id(ApiKind kind, uint64_t unique);

// OpenAI's finish_reason string ("stop", "length"); a cancelled choice reads "abort".
const char* openai_finish_reason(FinishReason r);

Json usage_json(const UsageCounts& usage);
Json chat_logprobs_json(const std::vector<TokenLogprob>& lps, const TokenPieceFn& piece);
// text_offset counts bytes from the start of the choice's text; `offset` carries
// it across the chunks of a stream.
Json completion_logprobs_json(const std::vector<TokenLogprob>& lps, const TokenPieceFn& piece, int64_t& offset);

Json response_json(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices, const UsageCounts& usage,
                   const TokenPieceFn& piece);

// One streamed chunk for one choice. `role` adds delta.role (a chat stream's
// first chunk per choice); finish != None adds finish_reason; logprobs may be null.
struct ChunkPart {
    int32_t index = 0;
    std::string text{};
    bool role = false;
    FinishReason finish = FinishReason::None;
    Json logprobs{};    // null, or the kind's logprobs object for this chunk's tokens
    Json tool_calls{};  // null, or delta.tool_calls
    bool tool_calls_finish = false;  // finish_reason "tool_calls" instead of finish's
    std::string reasoning{};         // delta.reasoning_content when not empty
};
Json chunk_json(const ResponseMeta& meta, const ChunkPart& part, bool include_usage);
// The last chunk when stream_options.include_usage is set: no choices, usage filled.
Json usage_chunk_json(const ResponseMeta& meta, const UsageCounts& usage);

std::string sse_event(const Json& data);
std::string sse_done();

}  // namespace tessera
