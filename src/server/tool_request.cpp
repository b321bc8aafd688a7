// Validation of the tool-calling fields of a chat request (see tool_request.h).
#include "server/tool_request.h"

#include <algorithm>

#include "server/field_reader.h"

namespace tessera {
namespace {

bool valid_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

std::optional<ApiError> read_tool(const Json& tool, size_t i, ToolRequest& out) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!tool.is_object()) return bad_request("tools", where + " must be an object");
    auto type = tool.find("type");
    if (type == tool.end() || *type != "function") {
        return bad_request("tools", where + ".type must be \"function\" (the only tool type supported)");
    }
    auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object()) return bad_request("tools", where + ".function must be an object");
    auto name = fn->find("name");
    if (name == fn->end() || !name->is_string() || !valid_name(name->get<std::string>())) {
        return bad_request("tools", where + ".function.name must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -");
    }
    const std::string n = name->get<std::string>();
    if (std::find(out.names.begin(), out.names.end(), n) != out.names.end()) {
        return bad_request("tools", where + ": the function name '" + n + "' is used twice");
    }
    auto desc = fn->find("description");
    if (desc != fn->end() && !desc->is_null() && !desc->is_string()) {
        return bad_request("tools", where + ".function.description must be a string");
    }
    auto params = fn->find("parameters");
    if (params != fn->end() && !params->is_null() && !params->is_object()) {
        return bad_request("tools", where + ".function.parameters must be a JSON Schema object");
    }
    auto strict = fn->find("strict");
    if (strict != fn->end() && !strict->is_null() && !strict->is_boolean()) {
        return bad_request("tools", where + ".function.strict must be a boolean");
    }
    out.names.push_back(n);
    out.parameters.push_back(params != fn->end() && params->is_object() ? *params : Json::object());
    return std::nullopt;
}

std::optional<ApiError> read_choice(const Json& v, ToolRequest& out) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "none") {
            out.choice = ToolChoice::None;
        } else if (s == "auto") {
            out.choice = ToolChoice::Auto;
        } else if (s == "required") {
            out.choice = ToolChoice::Required;
        } else {
            return bad_request("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                              "{\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
    } else if (v.is_object() && v.contains("type") && v["type"] == "function" && v.contains("function") &&
               v["function"].is_object() && v["function"].contains("name") && v["function"]["name"].is_string()) {
        out.choice = ToolChoice::Named;
        out.named = v["function"]["name"].get<std::string>();
        if (std::find(out.names.begin(), out.names.end(), out.named) == out.names.end()) {
            return bad_request("tool_choice", "'tool_choice' names the function '" + out.named +
                                                  "', which is not among the request's tools");
        }
    } else {
        return bad_request("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                          "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    if (out.forced() && out.names.empty()) {
        return bad_request("tool_choice", "'tool_choice' requires a tool call but the request has no 'tools'");
    }
    return std::nullopt;
}

}  // namespace

std::optional<ApiError> read_tool_request(const Json& body, ToolRequest& out) {
    FieldReader r(body);
    if (const Json* tools = r.find("tools")) {
        if (!tools->is_array()) return bad_request("tools", "'tools' must be a list");
        for (size_t i = 0; i < tools->size(); ++i) {
            if (auto err = read_tool((*tools)[i], i, out)) return err;
        }
        if (!tools->empty()) out.tools = *tools;
    }
    out.choice = out.names.empty() ? ToolChoice::None : ToolChoice::Auto;
    if (const Json* choice = r.find("tool_choice")) {
        if (auto err = read_choice(*choice, out)) return err;
    }
    r.boolean("parallel_tool_calls", out.parallel);
    return r.error();
}

}  // namespace tessera
