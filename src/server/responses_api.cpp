#include "server/responses_api.h"

#include <utility>

namespace tessera {
namespace {

// Fields the Responses API defines that change what is generated and that
// tessera does not implement: refused, so a client never gets a silently
// different answer.
constexpr const char* kRefused[] = {"tools", "tool_choice", "previous_response_id", "reasoning", "include",
                                    "background", "conversation", "prompt"};

std::optional<ApiError> content_text(const Json& content, std::string& out) {
    if (content.is_string()) {
        out = content.get<std::string>();
        return std::nullopt;
    }
    if (!content.is_array()) return bad_request("input", "a message's 'content' must be a string or a list of parts");
    out.clear();
    for (const Json& part : content) {
        const auto type = part.is_object() ? part.find("type") : part.end();
        const auto text = part.is_object() ? part.find("text") : part.end();
        const bool textual = type != part.end() && type->is_string() &&
                             (*type == "input_text" || *type == "output_text");
        if (!textual || text == part.end() || !text->is_string()) {
            return bad_request("input", "only 'input_text' and 'output_text' content parts are supported",
                               "unsupported_content");
        }
        out += text->get<std::string>();
    }
    return std::nullopt;
}

std::optional<ApiError> input_messages(const Json& input, Json& messages) {
    if (input.is_string()) {
        messages.push_back({{"role", "user"}, {"content", input}});
        return std::nullopt;
    }
    if (!input.is_array() || input.empty()) return bad_request("input", "'input' must be a string or a non-empty list");
    for (const Json& item : input) {
        if (!item.is_object()) return bad_request("input", "each input item must be an object");
        const auto type = item.find("type");
        if (type != item.end() && *type != "message") {
            return bad_request("input", "only 'message' input items are supported", "unsupported_input_item");
        }
        const auto role = item.find("role");
        const auto content = item.find("content");
        if (role == item.end() || !role->is_string() || content == item.end()) {
            return bad_request("input", "each input message needs a string 'role' and a 'content'");
        }
        std::string r = role->get<std::string>();
        if (r == "developer") r = "system";  // the Responses API's name for system instructions
        if (r != "system" && r != "user" && r != "assistant") {
            return bad_request("input", "a message's role must be user, assistant, system or developer");
        }
        std::string text;
        if (auto err = content_text(*content, text)) return err;
        messages.push_back({{"role", r}, {"content", std::move(text)}});
    }
    return std::nullopt;
}

// text.format -> the chat body's response_format: "text" asks for nothing,
// "json_object" is itself, "json_schema" carries its name, schema and strict
// one level down, where chat keeps them. The schema is compiled (and its
// errors reported) on the chat path, as response_format's.
std::optional<ApiError> text_format(const Json& body, Json& response_format) {
    const auto text = body.find("text");
    if (text == body.end() || text->is_null()) return std::nullopt;
    if (!text->is_object()) return bad_request("text", "'text' must be an object");
    const auto format = text->find("format");
    if (format == text->end() || format->is_null()) return std::nullopt;
    const auto type = format->is_object() ? format->find("type") : format->end();
    if (type == format->end() || !type->is_string()) {
        return bad_request("text.format.type", "'text.format.type' must be one of text, json_object, json_schema");
    }
    if (*type == "text") return std::nullopt;
    if (*type == "json_object") {
        response_format = {{"type", "json_object"}};
        return std::nullopt;
    }
    if (*type != "json_schema") {
        return bad_request("text.format.type", "'text.format.type' must be one of text, json_object, json_schema; got '" +
                                                   type->get<std::string>() + "'");
    }
    const auto schema = format->find("schema");
    if (schema == format->end() || !(schema->is_object() || schema->is_boolean())) {
        return bad_request("text.format.schema", "'text.format.schema' (a JSON Schema) is required for json_schema");
    }
    Json inner = {{"schema", *schema}};
    for (const char* key : {"name", "strict", "description"}) {
        if (const auto it = format->find(key); it != format->end()) inner[key] = *it;
    }
    response_format = {{"type", "json_schema"}, {"json_schema", std::move(inner)}};
    return std::nullopt;
}

}  // namespace

std::optional<ApiError> responses_to_chat_body(const Json& body, Json& chat) {
    for (const char* key : kRefused) {
        const auto it = body.find(key);
        if (it == body.end() || it->is_null()) continue;
        if ((it->is_array() && it->empty()) || (std::string(key) == "tool_choice" && *it == "none") ||
            (std::string(key) == "background" && *it == false)) {
            continue;  // asks for nothing
        }
        return bad_request(key, std::string("'") + key + "' is not supported by tessera's Responses API",
                           "unsupported_parameter");
    }
    Json response_format;
    if (auto err = text_format(body, response_format)) return err;
    Json messages = Json::array();
    if (const auto it = body.find("instructions"); it != body.end() && !it->is_null()) {
        if (!it->is_string()) return bad_request("instructions", "'instructions' must be a string");
        messages.push_back({{"role", "system"}, {"content", *it}});
    }
    const auto input = body.find("input");
    if (input == body.end() || input->is_null()) return bad_request("input", "'input' is required");
    if (auto err = input_messages(*input, messages)) return err;
    chat = Json::object();
    chat["messages"] = std::move(messages);
    for (const char* key : {"model", "temperature", "top_p", "seed", "stream", "user"}) {
        if (const auto it = body.find(key); it != body.end()) chat[key] = *it;
    }
    if (const auto it = body.find("max_output_tokens"); it != body.end()) chat["max_tokens"] = *it;
    if (!response_format.is_null()) chat["response_format"] = std::move(response_format);
    return std::nullopt;
}

ResponsesEcho responses_echo(const Json& body) {
    ResponsesEcho e;
    if (const auto it = body.find("instructions"); it != body.end()) e.instructions = *it;
    if (const auto it = body.find("max_output_tokens"); it != body.end()) e.max_output_tokens = *it;
    if (const auto it = body.find("temperature"); it != body.end() && it->is_number()) e.temperature = *it;
    if (const auto it = body.find("top_p"); it != body.end() && it->is_number()) e.top_p = *it;
    if (const auto it = body.find("text"); it != body.end() && it->is_object()) {
        if (const auto f = it->find("format"); f != it->end() && f->is_object()) e.text_format = *f;
    }
    return e;
}

Json output_text_part(const std::string& text) {
    return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json message_item(const ResponseIds& ids, const std::string* final_text) {
    Json content = Json::array();
    if (final_text) content.push_back(output_text_part(*final_text));
    return {{"type", "message"}, {"id", ids.message}, {"status", final_text ? "completed" : "in_progress"},
            {"role", "assistant"}, {"content", std::move(content)}};
}

Json response_object(const ResponseMeta& meta, const ResponseIds& ids, const ResponsesEcho& echo,
                     const std::string& text, FinishReason finish, const UsageCounts* usage) {
    const bool done = finish != FinishReason::None;
    const bool incomplete = finish == FinishReason::Length;
    const char* status = !done ? "in_progress" : incomplete ? "incomplete" : "completed";
    Json output = Json::array();
    if (done) output.push_back(message_item(ids, &text));
    Json out = {{"id", ids.response},
                {"object", "response"},
                {"created_at", meta.created},
                {"status", status},
                {"error", nullptr},
                {"incomplete_details", incomplete ? Json{{"reason", "max_output_tokens"}} : Json(nullptr)},
                {"instructions", echo.instructions},
                {"max_output_tokens", echo.max_output_tokens},
                {"model", meta.model},
                {"output", std::move(output)},
                {"parallel_tool_calls", false},
                {"previous_response_id", nullptr},
                {"store", false},
                {"temperature", echo.temperature},
                {"top_p", echo.top_p},
                {"text", {{"format", echo.text_format}}},
                {"tool_choice", "none"},
                {"tools", Json::array()},
                {"truncation", "disabled"},
                {"metadata", Json::object()},
                {"usage", nullptr}};
    if (usage) {
        out["usage"] = {{"input_tokens", usage->prompt_tokens},
                        {"input_tokens_details", {{"cached_tokens", usage->cached_tokens}}},
                        {"output_tokens", usage->completion_tokens},
                        {"output_tokens_details", {{"reasoning_tokens", 0}}},
                        {"total_tokens", usage->prompt_tokens + usage->completion_tokens}};
    }
    return out;
}

std::string responses_event(const std::string& type, Json data, int64_t& sequence) {
    data["type"] = type;
    data["sequence_number"] = sequence++;
    return "event: " + type + "\ndata: " + dump_json(data) + "\n\n";
}

}  // namespace tessera
