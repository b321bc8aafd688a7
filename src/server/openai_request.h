// OpenAI request bodies -> GenerationRequest: /v1/chat/completions (messages
// rendered through the model's chat template) and /v1/completions (a string
// or token-id prompt), with every field type- and range-checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/request.h"
#include "grammar/grammar.h"
#include "grammar/grammar_cache.h"
#include "server/api_error.h"
#include "server/cache_control.h"
#include "server/json_util.h"
#include "server/tool_request.h"
#include "template/chat_render.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

// Caps only the HTTP side has; past them the request gets a 400. What a
// request may ask of the engine (n, logprobs, stop strings, logit_bias) is
// capped by the engine's RequestLimits, which the parsers read from
// PromptContext, so server and engine enforce the same numbers.
struct ProtocolLimits {
    int max_json_depth = 64;
    // Worst case a non-streamed response is built up in memory for:
    // n x max_tokens x (top_logprobs + 1 when logprobs are asked for). Past it
    // the request gets a 400 before any work; streamed responses are not
    // held, so they are not capped this way. The default admits n = 16 with
    // a 32K context and no logprobs, refuses n = 16 x 4000 tokens x 21
    // logprobs (830 MB at peak when it was allowed).
    int64_t max_response_tokens = int64_t{1} << 19;
    // Size, rule and nesting caps on a request's grammar or JSON Schema
    // (response_format, guided_*, grammar, json_schema).
    GrammarLimits grammar;
    // Each model's GrammarCache (compiled grammars and token tables), bytes.
    size_t grammar_cache_bytes = size_t{256} << 20;
    // TTLs of prompt-cache markers (cache_control) and the system-prompt option.
    CacheControlOptions cache_control;
};

enum class ApiKind { Chat, Completion, Responses };  // Responses: parsed as a chat

struct ParsedRequest {
    ApiKind kind = ApiKind::Chat;
    GenerationRequest gen;
    std::string model;           // echoed back; tessera serves one model
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    bool seed_given = false;     // else the caller picks a fresh random seed
    bool tokens_as_ids = false;  // vLLM's return_tokens_as_token_ids: logprobs name tokens "token_id:N"
    ToolRequest tools;           // chat: tools, tool_choice, parallel_tool_calls
};

// What turning a request into tokens needs from the loaded model.
struct PromptContext {
    const Tokenizer* tokenizer = nullptr;
    const ChatTemplate* chat_template = nullptr;  // compiled once per model
    int64_t max_context = 0;  // prompt + max_tokens must fit
    RequestLimits limits;     // the engine's (EngineOptions::limits)
    GrammarCache* grammars = nullptr;  // the model's; null: compile every constraint anew, tables built lazily
};

std::optional<ApiError> parse_chat_request(const Json& body, const PromptContext& ctx, const ProtocolLimits& limits,
                                           ParsedRequest& out);
std::optional<ApiError> parse_completion_request(const Json& body, const PromptContext& ctx,
                                                 const ProtocolLimits& limits, ParsedRequest& out);

}  // namespace tessera
