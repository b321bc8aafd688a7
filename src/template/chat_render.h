// Renders an OpenAI-style conversation through a model's chat template, the
// way Hugging Face transformers' apply_chat_template does, and supplies ChatML
// when a model ships no template.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "template/template_limits.h"

namespace tessera {

struct ChatRenderInput {
    // JSON array of messages: {"role": ..., "content": string | null |
    // [{"type": "text", "text": ...}, ...], "tool_calls": [...], "tool_call_id": ...}.
    // A content list of text parts is joined with "\n" into one string.
    std::string messages_json;
    std::string tools_json;  // JSON array of tool definitions; empty means none
    bool add_generation_prompt = true;
    std::string bos_token;
    std::string eos_token;
    std::optional<int64_t> now_epoch_seconds;  // fixes strftime_now() (tests)
};

Expected<std::string> render_chat(const std::string& template_src, const ChatRenderInput& in,
                                  const TemplateLimits& limits = {});

// The template to use for a model: its own, or ChatML when it has none, in
// which case `warning` says so (for the caller to log or show).
struct ChatTemplateChoice {
    std::string source;
    std::string warning;
};
ChatTemplateChoice choose_chat_template(const std::string& model_template);
std::string chatml_template();

}  // namespace tessera
