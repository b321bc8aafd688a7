// Forced tool calls as a grammar (see tool_grammar.h): the allowed calls as
// one JSON Schema (anyOf over the functions), compiled by grammar/json_schema,
// wrapped in the family's call syntax.
#include "server/tool_grammar.h"

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"

namespace tessera {
namespace {

// Only refs into $defs / definitions survive being moved under the combined
// schema (a "#" or "#/properties/.." ref would point at the wrong root).
Status check_refs(const Json& schema, const std::string& tool) {
    if (schema.is_object()) {
        for (const auto& [key, value] : schema.items()) {
            if (key == "$ref") {
                const std::string ref = value.is_string() ? value.get<std::string>() : "";
                if (ref.rfind("#/$defs/", 0) != 0 && ref.rfind("#/definitions/", 0) != 0) {
                    return Status::error("tool '" + tool + "': $ref '" + ref +
                                         "' is not supported in a forced tool call (only #/$defs/... and "
                                         "#/definitions/...)");
                }
            }
            TS_RETURN_IF_ERROR(check_refs(value, tool));
        }
    } else if (schema.is_array()) {
        for (const Json& item : schema) TS_RETURN_IF_ERROR(check_refs(item, tool));
    }
    return ok_status();
}

// Moves the tool's $defs / definitions into the combined schema's.
Status hoist_definitions(Json& params, const std::string& tool, Json& combined) {
    for (const char* container : {"$defs", "definitions"}) {
        auto it = params.find(container);
        if (it == params.end()) continue;
        if (!it->is_object()) return Status::error("tool '" + tool + "': '" + container + "' must be an object");
        Json& target = combined[container];
        if (target.is_null()) target = Json::object();
        for (const auto& [name, def] : it->items()) {
            if (target.contains(name) && target[name] != def) {
                return Status::error("tool '" + tool + "': the definition '" + name +
                                     "' differs from another tool's of that name");
            }
            target[name] = def;
        }
        params.erase(it);
    }
    return ok_status();
}

Expected<Json> call_schema(const ToolRequest& tools, ToolCallFamily family) {
    const char* args_key = family == ToolCallFamily::Llama3 ? "parameters" : "arguments";
    Json combined = Json::object();
    Json alternatives = Json::array();
    for (size_t i = 0; i < tools.names.size(); ++i) {
        const std::string& name = tools.names[i];
        if (tools.choice == ToolChoice::Named && name != tools.named) continue;
        Json params = tools.parameters[i];
        TS_RETURN_IF_ERROR(check_refs(params, name));
        TS_RETURN_IF_ERROR(hoist_definitions(params, name, combined));
        if (params.empty()) params = Json{{"type", "object"}};  // no parameters: {}
        Json call = Json::object();
        call["type"] = "object";
        call["properties"] = Json{{"name", {{"const", name}}}, {args_key, std::move(params)}};
        call["required"] = Json::array({"name", args_key});
        alternatives.push_back(std::move(call));
    }
    if (alternatives.size() == 1) {
        for (auto& [key, value] : alternatives[0].items()) combined[key] = value;
    } else {
        combined["anyOf"] = std::move(alternatives);
    }
    return combined;
}

// Parallel calls per message. A bound, not a star: a small model that
// repeats itself would otherwise write calls until max_tokens cuts the
// family's closing syntax off and nothing parses.
constexpr int kMaxParallelCalls = 8;

// GBNF for `call` repeated as the family writes several calls.
std::string wrap(ToolCallFamily family, bool parallel) {
    auto calls = [parallel](const std::string& one, const std::string& separator) {
        if (!parallel) return one;
        return one + " (" + separator + " " + one + "){0," + std::to_string(kMaxParallelCalls - 1) + "}";
    };
    switch (family) {
        case ToolCallFamily::Hermes: {
            const std::string one = R"("<tool_call>\n" tool-call "\n</tool_call>")";
            return calls(one, R"("\n")");
        }
        case ToolCallFamily::Llama3: return calls("tool-call", R"("; ")");
        case ToolCallFamily::Mistral: return R"("[TOOL_CALLS][" )" + calls("tool-call", R"(",")") + R"( "]")";
        case ToolCallFamily::DeepSeek:  // refused before (tool_call_gbnf)
        case ToolCallFamily::Generic: break;
    }
    return R"("{\"tool_calls\":[" )" + calls("tool-call", R"(",")") + R"( "]}")";
}

}  // namespace

Expected<std::string> tool_call_gbnf(const ToolRequest& tools, ToolCallFamily family, const GrammarLimits& limits) {
    if (!tools.forced()) return Status::error("tool calls are only forced with tool_choice \"required\" or a named function");
    // DeepSeek writes the name outside the JSON, so each name needs its own
    // arguments grammar, and json_schema.h names its rules alike for every schema.
    if (family == ToolCallFamily::DeepSeek) {
        return Status::error("forcing a call is not supported yet for this model's tool-call syntax (deepseek); "
                             "use tool_choice \"auto\"");
    }
    Json schema;
    TS_ASSIGN_OR_RETURN(schema, call_schema(tools, family));
    std::string body;
    TS_ASSIGN_OR_RETURN(body, json_schema_to_gbnf(schema.dump(-1, ' ', false, Json::error_handler_t::replace), limits));
    // json_schema_to_gbnf names its start rule "root" on the first line; the
    // call becomes one rule of the wrapping grammar.
    const std::string root = "root ::= ";
    if (body.rfind(root, 0) != 0) return Status::error("internal: unexpected JSON Schema grammar shape");
    return "root ::= " + wrap(family, tools.parallel) + "\ntool-call ::= " + body.substr(root.size());
}

Expected<Grammar> compile_tool_call_grammar(const ToolRequest& tools, ToolCallFamily family,
                                            const GrammarLimits& limits) {
    std::string gbnf;
    TS_ASSIGN_OR_RETURN(gbnf, tool_call_gbnf(tools, family, limits));
    GrammarLimits generated = limits;
    generated.max_source_bytes = std::max(limits.max_source_bytes, gbnf.size());  // the schemas' size was checked
    return parse_gbnf(gbnf, generated);
}

}  // namespace tessera
