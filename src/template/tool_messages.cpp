// Tool-call message forms for chat templates (see tool_messages.h).
#include "template/tool_messages.h"

#include <string>

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

// The JSON object `text` holds, or null when it holds something else.
Json parse_arguments(const std::string& text) {
    Json parsed = parse_tool_json(text);
    return parsed.is_object() ? parsed : Json();
}

std::string dump_compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

const Json* find_calls(const Json& msg) {
    auto it = msg.find("tool_calls");
    return it != msg.end() && it->is_array() && !it->empty() ? &*it : nullptr;
}

bool is_tool_role(const Json& msg) {
    auto it = msg.find("role");
    return it != msg.end() && *it == "tool";
}

// Rewrites each call's function.arguments with `fn`.
template <class Fn>
void map_arguments(Json& msg, Fn fn) {
    auto it = msg.find("tool_calls");
    if (it == msg.end() || !it->is_array()) return;
    for (Json& call : *it) {
        if (!call.is_object()) continue;
        auto fit = call.find("function");
        if (fit == call.end() || !fit->is_object()) continue;
        auto ait = fit->find("arguments");
        if (ait != fit->end()) *ait = fn(*ait);
    }
}

Json as_object(const Json& args) {
    if (!args.is_string()) return args;
    Json parsed = parse_arguments(args.get_ref<const std::string&>());
    return parsed.is_null() ? args : parsed;
}

Json as_string(const Json& args) { return args.is_string() ? args : Json(dump_compact(args)); }

std::string content_text(const Json& msg) {
    auto it = msg.find("content");
    return it != msg.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// {"tool_calls":[{"name":..,"arguments":{..}}]}: the generic call syntax.
std::string calls_text(const Json& calls) {
    Json list = Json::array();
    for (const Json& call : calls) {
        const Json fn = call.is_object() && call.contains("function") ? call["function"] : Json::object();
        Json item = Json::object();
        item["name"] = fn.is_object() && fn.contains("name") ? fn["name"] : Json("");
        item["arguments"] = fn.is_object() && fn.contains("arguments") ? as_object(fn["arguments"]) : Json::object();
        list.push_back(std::move(item));
    }
    Json wrapper = Json::object();
    wrapper["tool_calls"] = std::move(list);
    return dump_compact(wrapper);
}

std::string tool_response_text(const Json& msg) {
    Json response = Json::object();
    for (const char* key : {"tool_call_id", "name"}) {
        auto it = msg.find(key);
        if (it != msg.end() && it->is_string()) response[key] = *it;
    }
    response["content"] = content_text(msg);
    Json wrapper = Json::object();
    wrapper["tool_response"] = std::move(response);
    return dump_compact(wrapper);
}

Json plain_form(const Json& messages) {
    Json out = Json::array();
    bool in_tool_run = false;
    for (const Json& msg : messages) {
        if (is_tool_role(msg)) {
            // A run of tool results is one user turn, so templates that
            // demand alternating roles accept it.
            if (in_tool_run) {
                out.back()["content"] = out.back()["content"].get<std::string>() + "\n" + tool_response_text(msg);
            } else {
                out.push_back(Json{{"role", "user"}, {"content", tool_response_text(msg)}});
            }
            in_tool_run = true;
            continue;
        }
        in_tool_run = false;
        Json copy = msg;
        std::string content = content_text(msg);
        if (const Json* calls = find_calls(msg)) {
            if (!content.empty()) content += "\n";
            content += calls_text(*calls);
        }
        copy.erase("tool_calls");
        copy["content"] = std::move(content);
        out.push_back(std::move(copy));
    }
    return out;
}

}  // namespace

Json parse_tool_json(std::string_view text) {
    constexpr int kMaxDepth = 64;
    constexpr int kMaxKeys = 4096;
    bool too_big = false;
    int keys = 0;
    auto guard = [&](int depth, Json::parse_event_t event, Json&) {
        if (depth > kMaxDepth || (event == Json::parse_event_t::key && ++keys > kMaxKeys)) too_big = true;
        return !too_big;
    };
    Json parsed = Json::parse(text.begin(), text.end(), guard, /*allow_exceptions=*/false);
    if (too_big) return Json(Json::value_t::discarded);
    return parsed;
}

bool has_tool_messages(const Json& messages) {
    for (const Json& msg : messages) {
        if (!msg.is_object()) continue;
        auto content = msg.find("content");
        if (find_calls(msg) || is_tool_role(msg) || content == msg.end() || content->is_null()) return true;
    }
    return false;
}

Json tool_message_form(const Json& messages, ToolMessageForm form) {
    if (form == ToolMessageForm::Plain) return plain_form(messages);
    Json out = messages;
    for (Json& msg : out) {
        if (form == ToolMessageForm::Strings) {
            map_arguments(msg, as_string);
        } else {
            map_arguments(msg, as_object);
        }
        if (form == ToolMessageForm::ObjectsEmptyContent && msg.is_object() && msg.contains("content") &&
            msg["content"].is_null()) {
            msg["content"] = "";
        }
    }
    return out;
}

}  // namespace tessera
