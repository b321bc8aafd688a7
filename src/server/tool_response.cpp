// Tool calls in responses and streams (see tool_response.h).
#include "server/tool_response.h"

#include <algorithm>

namespace tessera {
namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::string alphanumerics(uint64_t state, size_t n) {
    constexpr std::string_view kChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        state = splitmix64(state);
        out += kChars[state % kChars.size()];
    }
    return out;
}

}  // namespace

std::string tool_call_id(ToolCallFamily family, uint64_t seed, int32_t choice, size_t k) {
    const uint64_t state = splitmix64(seed ^ splitmix64((static_cast<uint64_t>(choice) << 32) | k));
    if (family == ToolCallFamily::Mistral) return alphanumerics(state, 9);
    return "call_" + alphanumerics(state, 24);
}

Json tool_calls_json(const std::vector<ToolCall>& calls, ToolCallFamily family, uint64_t seed, int32_t choice) {
    Json out = Json::array();
    for (size_t k = 0; k < calls.size(); ++k) {
        out.push_back(Json{{"id", tool_call_id(family, seed, choice, k)},
                           {"type", "function"},
                           {"function", {{"name", calls[k].name}, {"arguments", calls[k].arguments}}}});
    }
    return out;
}

Json tool_call_head_delta(const ToolCall& call, size_t k, ToolCallFamily family, uint64_t seed, int32_t choice) {
    return Json::array({Json{{"index", k},
                             {"id", tool_call_id(family, seed, choice, k)},
                             {"type", "function"},
                             {"function", {{"name", call.name}, {"arguments", ""}}}}});
}

Json tool_call_arguments_delta(const ToolCall& call, size_t k) {
    return Json::array({Json{{"index", k}, {"function", {{"arguments", call.arguments}}}}});
}

std::string ToolCallStream::push(std::string_view text) {
    text_ += text;
    const size_t start = std::max(sent_, tool_call_start(text_, family_, /*complete=*/false, sent_));
    std::string out = text_.substr(sent_, start - sent_);
    sent_ = start;
    return out;
}

ToolCallOutput ToolCallStream::finish() {
    // The held text starts where a call may begin, so its calls are the
    // whole message's (tool_call_start's promise).
    const std::string_view held = std::string_view(text_).substr(sent_);
    ToolCallOutput out = parse_tool_calls(held, family_);
    sent_ = text_.size();
    return out;
}

}  // namespace tessera
