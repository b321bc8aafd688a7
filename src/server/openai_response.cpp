// Builders for OpenAI's response objects. Shapes follow the OpenAI API
// reference field for field, so the official client libraries parse them.
#include "server/openai_response.h"

#include <cmath>
#include <cstdio>

#include "server/tool_response.h"

namespace tessera {
namespace {

constexpr const char* kFingerprint = "tessera";

// OpenAI never sends -inf; a banned token's logprob reads as a large negative.
double finite_logprob(float lp) {
    return std::isfinite(lp) ? static_cast<double>(lp) : -9999.0;
}

Json bytes_json(const std::string& s) {
    Json out = Json::array();
    for (char c : s) out.push_back(static_cast<int>(static_cast<unsigned char>(c)));
    return out;
}

Json chat_token_json(int32_t id, float lp, const TokenPieceFn& piece) {
    const std::string p = piece(id);
    return Json{{"token", p}, {"logprob", finite_logprob(lp)}, {"bytes", bytes_json(p)}};
}

Json header_json(const ResponseMeta& meta, const char* object) {
    return Json{{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model},
                {"system_fingerprint", kFingerprint}};
}

Json logprobs_for(const ResponseMeta& meta, const std::vector<TokenLogprob>& lps, const TokenPieceFn& piece) {
    if (!meta.logprobs) return nullptr;
    if (meta.kind == ApiKind::Chat) return chat_logprobs_json(lps, piece);
    int64_t offset = 0;
    return completion_logprobs_json(lps, piece, offset);
}

Json finish_json(FinishReason r) {
    if (r == FinishReason::None) return nullptr;
    return openai_finish_reason(r);
}

}  // namespace

std::string make_response_id(ApiKind kind, uint64_t unique) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(unique));
    const char* prefix = kind == ApiKind::Chat ? "chatcmpl-" : kind == ApiKind::Completion ? "cmpl-" : "resp_";
    return prefix + std::string(hex);
}

const char* openai_finish_reason(FinishReason r) {
    switch (r) {
        case FinishReason::Stop: return "stop";
        case FinishReason::Length: return "length";
        case FinishReason::Cancelled: return "abort";
        case FinishReason::Error: return "error";
        case FinishReason::None: break;
    }
    return "stop";
}

Json usage_json(const UsageCounts& u) {
    return Json{{"prompt_tokens", u.prompt_tokens},
                {"completion_tokens", u.completion_tokens},
                {"total_tokens", u.prompt_tokens + u.completion_tokens},
                {"prompt_tokens_details",
                 {{"cached_tokens", u.cached_tokens}, {"cache_write_tokens", u.cache_write_tokens}}}};
}

Json chat_logprobs_json(const std::vector<TokenLogprob>& lps, const TokenPieceFn& piece) {
    Json content = Json::array();
    for (const TokenLogprob& t : lps) {
        Json entry = chat_token_json(t.token, t.logprob, piece);
        Json top = Json::array();
        for (const auto& [id, lp] : t.top) top.push_back(chat_token_json(id, lp, piece));
        entry["top_logprobs"] = std::move(top);
        content.push_back(std::move(entry));
    }
    return Json{{"content", std::move(content)}, {"refusal", nullptr}};
}

Json completion_logprobs_json(const std::vector<TokenLogprob>& lps, const TokenPieceFn& piece, int64_t& offset) {
    Json tokens = Json::array(), token_lps = Json::array(), tops = Json::array(), offsets = Json::array();
    for (const TokenLogprob& t : lps) {
        const std::string p = piece(t.token);
        tokens.push_back(p);
        token_lps.push_back(finite_logprob(t.logprob));
        Json top = Json::object();
        for (const auto& [id, lp] : t.top) top[piece(id)] = finite_logprob(lp);
        tops.push_back(std::move(top));
        offsets.push_back(offset);
        offset += static_cast<int64_t>(p.size());
    }
    return Json{{"tokens", std::move(tokens)},
                {"token_logprobs", std::move(token_lps)},
                {"top_logprobs", std::move(tops)},
                {"text_offset", std::move(offsets)}};
}

Json response_json(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices, const UsageCounts& usage,
                   const TokenPieceFn& piece) {
    const bool chat = meta.kind == ApiKind::Chat;
    Json out = header_json(meta, chat ? "chat.completion" : "text_completion");
    Json list = Json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
        const ChoiceResult& c = choices[i];
        Json choice = {{"index", i}};
        if (chat && !c.tool_calls.empty()) {
            const ToolCallFamily family = meta.tool_family.value_or(ToolCallFamily::Generic);
            choice["message"] = {{"role", "assistant"},
                                 {"content", c.text.empty() ? Json() : Json(c.text)},
                                 {"refusal", nullptr},
                                 {"tool_calls", tool_calls_json(c.tool_calls, family, meta.tool_call_seed,
                                                                static_cast<int32_t>(i))}};
        } else if (chat) {
            choice["message"] = {{"role", "assistant"}, {"content", c.text}, {"refusal", nullptr}};
        } else {
            choice["text"] = c.text;
        }
        if (chat && !c.reasoning.empty()) choice["message"]["reasoning_content"] = c.reasoning;
        choice["logprobs"] = logprobs_for(meta, c.logprobs, piece);
        choice["finish_reason"] = c.tool_calls.empty() ? finish_json(c.finish) : Json("tool_calls");
        list.push_back(std::move(choice));
    }
    out["choices"] = std::move(list);
    out["usage"] = usage_json(usage);
    return out;
}

Json chunk_json(const ResponseMeta& meta, const ChunkPart& part, bool include_usage) {
    const bool chat = meta.kind == ApiKind::Chat;
    Json out = header_json(meta, chat ? "chat.completion.chunk" : "text_completion");
    Json choice = {{"index", part.index}};
    if (chat) {
        Json delta = Json::object();
        if (part.role) delta["role"] = "assistant";
        if (part.role || !part.text.empty()) delta["content"] = part.text;
        if (!part.reasoning.empty()) delta["reasoning_content"] = part.reasoning;
        if (!part.tool_calls.is_null()) delta["tool_calls"] = part.tool_calls;
        choice["delta"] = std::move(delta);
    } else {
        choice["text"] = part.text;
    }
    choice["logprobs"] = part.logprobs;
    choice["finish_reason"] = part.tool_calls_finish ? Json("tool_calls") : finish_json(part.finish);
    out["choices"] = Json::array({std::move(choice)});
    if (include_usage) out["usage"] = nullptr;
    return out;
}

Json usage_chunk_json(const ResponseMeta& meta, const UsageCounts& usage) {
    Json out = header_json(meta, meta.kind == ApiKind::Chat ? "chat.completion.chunk" : "text_completion");
    out["choices"] = Json::array();
    out["usage"] = usage_json(usage);
    return out;
}

std::string sse_event(const Json& data) {
    return "data: " + dump_json(data) + "\n\n";
}

std::string sse_done() {
    return "data: [DONE]\n\n";
}

}  // namespace tessera
