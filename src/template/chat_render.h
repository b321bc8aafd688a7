// Renders an OpenAI-style conversation through a model's chat template, the
// way Hugging Face transformers' apply_chat_template does, and supplies ChatML
// when a model ships no template. The template is compiled once per model;
// requests hand their messages and tools over as parsed, ordered JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "template/template.h"
#include "template/template_limits.h"
#include "template/tool_calls.h"

namespace tessera {

struct ChatRenderInput {
    // Array of messages: {"role": ..., "content": string | null |
    // [{"type": "text", "text": ...}, ...], "tool_calls": [...], "tool_call_id": ...}.
    // A content list of text parts is joined with "\n" into one string. A
    // conversation with tool calls renders in the first form of
    // tool_messages.h the template accepts (arguments as objects, as
    // strings, or no tool syntax at all).
    nlohmann::ordered_json messages;
    // Array of tool definitions, passed to the template as sent (key order
    // kept, so `tools | tojson` shows the schema as written); null: none.
    nlohmann::ordered_json tools;
    bool add_generation_prompt = true;
    std::optional<int64_t> now_epoch_seconds;  // fixes strftime_now() (tests)
};

// JSON text (a file, a command-line argument) as the value ChatRenderInput
// holds; `what` names it in the error.
Expected<nlohmann::ordered_json> parse_chat_json(const std::string& text, const char* what);

// A chat template compiled once (per model), with the bos/eos token texts
// templates refer to. Immutable: render() may run on many threads at once.
class ChatTemplate {
public:
    // A source that does not compile is kept with its error, which render()
    // returns: a model whose template tessera cannot parse still serves text
    // completions. compile_status() tells at load time.
    ChatTemplate(std::string source, std::string bos_token, std::string eos_token,
                 const TemplateLimits& limits = {});

    // Takes the input by value: its messages are normalised and handed to the
    // template without another copy.
    Expected<std::string> render(ChatRenderInput in) const;

    const Status& compile_status() const { return compile_status_; }
    const std::string& source() const { return source_; }
    const std::string& bos_token() const { return bos_token_; }
    const std::string& eos_token() const { return eos_token_; }
    // How this template's model writes tool calls (recognised once, from the source).
    ToolCallFamily tool_call_family() const { return tool_call_family_; }
    // Whether the template shows the model the `tools` it is given (a probe
    // render at load); when not, the server describes them itself.
    bool shows_tools() const { return shows_tools_; }

private:
    std::string source_;
    std::string bos_token_;
    std::string eos_token_;
    TemplateLimits limits_;
    std::optional<Template> compiled_;  // empty when the source did not compile
    Status compile_status_;
    ToolCallFamily tool_call_family_ = ToolCallFamily::Generic;
    bool shows_tools_ = false;
};

// The template to use for a model: its own, or ChatML when it has none, in
// which case `warning` says so (for the caller to log or show).
struct ChatTemplateChoice {
    std::string source;
    std::string warning;
};
ChatTemplateChoice choose_chat_template(const std::string& model_template);
std::string chatml_template();

}  // namespace tessera
