// Chat rendering (see chat_render.h): validates the messages, normalises
// their content, and renders with the variables transformers passes
// (messages, tools, documents, add_generation_prompt, bos_token, eos_token);
// conversations with tool calls are retried in other forms (tool_messages.h).
#include "template/chat_render.h"

#include "template/tool_messages.h"

#include <nlohmann/json.hpp>

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

// A list of text parts becomes one string; anything else is left for the template.
Status normalize_content(Json& msg, size_t index) {
    auto it = msg.find("content");
    if (it == msg.end() || !it->is_array()) return ok_status();
    std::string joined;
    for (size_t i = 0; i < it->size(); ++i) {
        const Json& part = (*it)[i];
        const bool is_text = part.is_object() && part.contains("type") && part["type"] == "text" &&
                             part.contains("text") && part["text"].is_string();
        if (!is_text) {
            return Status::error("message " + std::to_string(index) + ": only {\"type\": \"text\"} content parts are supported");
        }
        if (i) joined += "\n";
        joined += part["text"].get<std::string>();
    }
    *it = joined;
    return ok_status();
}

Status check_messages(Json& messages) {
    if (!messages.is_array()) return Status::error("messages must be a JSON array");
    for (size_t i = 0; i < messages.size(); ++i) {
        Json& msg = messages[i];
        if (!msg.is_object()) return Status::error("message " + std::to_string(i) + " is not an object");
        if (!msg.contains("role") || !msg["role"].is_string()) {
            return Status::error("message " + std::to_string(i) + " has no string \"role\"");
        }
        const Json& content = msg.contains("content") ? msg["content"] : Json();
        if (!content.is_null() && !content.is_string() && !content.is_array()) {
            return Status::error("message " + std::to_string(i) + ": content must be a string, null or a list of parts");
        }
        TS_RETURN_IF_ERROR(normalize_content(msg, i));
    }
    return ok_status();
}

}  // namespace

Expected<Json> parse_chat_json(const std::string& text, const char* what) {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::error(std::string(what) + " is not valid JSON");
    return j;
}

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token,
                           const TemplateLimits& limits)
    : source_(std::move(source)), bos_token_(std::move(bos_token)), eos_token_(std::move(eos_token)),
      limits_(limits), tool_call_family_(tessera::tool_call_family(source_)) {
    auto compiled = Template::parse(source_, limits_);
    if (compiled) {
        compiled_.emplace(std::move(*compiled));
    } else {
        compile_status_ = compiled.status();
        return;
    }
    ChatRenderInput probe;
    probe.messages = Json::array({Json{{"role", "user"}, {"content", "x"}}});
    probe.tools = Json::array({Json{{"type", "function"},
                                    {"function", {{"name", "tessera_probe_tool"}, {"description", "probe"},
                                                  {"parameters", {{"type", "object"}, {"properties", Json::object()}}}}}}});
    auto shown = render(std::move(probe));
    shows_tools_ = shown && shown->find("tessera_probe_tool") != std::string::npos;
}

Expected<std::string> ChatTemplate::render(ChatRenderInput in) const {
    if (!compiled_) return compile_status_;
    TS_RETURN_IF_ERROR(check_messages(in.messages));
    // null: transformers passes tools=None when there are none
    if (!in.tools.is_null() && !in.tools.is_array()) return Status::error("tools must be a JSON array");
    Json vars = Json::object();
    vars["messages"] = nullptr;
    vars["tools"] = std::move(in.tools);
    vars["documents"] = nullptr;
    vars["add_generation_prompt"] = in.add_generation_prompt;
    vars["bos_token"] = bos_token_;
    vars["eos_token"] = eos_token_;
    RenderOptions options;
    options.limits = limits_;
    options.now_epoch_seconds = in.now_epoch_seconds;
    auto render_as = [&](ToolMessageForm form) {
        vars["messages"] = tool_message_form(in.messages, form);
        return compiled_->render(vars, options);
    };
    auto first = render_as(ToolMessageForm::Objects);
    if (first || !has_tool_messages(in.messages)) return first;
    // The template may want string arguments, or know nothing of tool calls;
    // if no form renders, the error of the first (the usual) form is the one
    // that explains.
    for (ToolMessageForm form : {ToolMessageForm::Strings, ToolMessageForm::ObjectsEmptyContent, ToolMessageForm::Plain}) {
        // A template that never reads tool_calls would render calls with empty content as nothing.
        if (form == ToolMessageForm::ObjectsEmptyContent && source_.find("tool_calls") == std::string::npos) continue;
        auto text = render_as(form);
        if (text) return text;
    }
    return first;
}

std::string chatml_template() {
    return "{% for message in messages %}"
           "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
           "{% endfor %}"
           "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
}

ChatTemplateChoice choose_chat_template(const std::string& model_template) {
    if (!model_template.empty()) return {model_template, ""};
    return {chatml_template(), "the model has no chat template (tokenizer.chat_template); using ChatML"};
}

}  // namespace tessera
