// Forced tool calls as a grammar (see tool_grammar.h): each allowed
// function's parameters schema compiled by grammar/json_schema into its own
// namespaced rules, one alternative per function with its name spelled as the
// family writes it, wrapped in the family's call syntax.
#include "server/tool_grammar.h"

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"

namespace tessera {
namespace {

// Parallel calls per message. A bound, not a star: a small model that
// repeats itself would otherwise write calls until max_tokens cuts the
// family's closing syntax off and nothing parses.
constexpr int kMaxParallelCalls = 8;

// A GBNF literal of `text`: tool names are [A-Za-z0-9_-] (tool_request.h),
// the families' markers printable, so only '"', '\\' and '\n' need escapes.
std::string literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out + "\"";
}

// One call of function `name` whose arguments are rule `args`, as the family writes it.
std::string call_syntax(ToolCallFamily family, const std::string& name, const std::string& args) {
    switch (family) {
        case ToolCallFamily::Llama3: return literal("{\"name\":\"" + name + "\",\"parameters\":") + " " + args + " \"}\"";
        case ToolCallFamily::DeepSeek:
            return literal("<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + name + "\n```json\n") + " " + args + " " +
                   literal("\n```<｜tool▁call▁end｜>");
        case ToolCallFamily::FunctionaryV31: return literal("<function=" + name + ">") + " " + args + " \"</function>\"";
        case ToolCallFamily::FunctionaryV32: return literal(name + "\n") + " " + args;
        // Straight to the call (no analysis first); <|call|> ends generation after it.
        case ToolCallFamily::Harmony:
            return literal("<|channel|>commentary to=functions." + name + " <|constrain|>json<|message|>") + " " + args;
        case ToolCallFamily::Hermes:
        case ToolCallFamily::Mistral:
        case ToolCallFamily::Generic: break;
    }
    return literal("{\"name\":\"" + name + "\",\"arguments\":") + " " + args + " \"}\"";
}

// GBNF for the rule `tool-call` repeated as the family writes several calls.
std::string wrap(ToolCallFamily family, bool parallel) {
    auto calls = [parallel](const std::string& one, const std::string& separator) {
        if (!parallel) return one;
        return one + " (" + separator + " " + one + "){0," + std::to_string(kMaxParallelCalls - 1) + "}";
    };
    switch (family) {
        case ToolCallFamily::Hermes: return calls(R"("<tool_call>\n" tool-call "\n</tool_call>")", R"("\n")");
        case ToolCallFamily::Llama3: return calls("tool-call", R"("; ")");
        case ToolCallFamily::Mistral: return R"("[TOOL_CALLS][" )" + calls("tool-call", R"(",")") + R"( "]")";
        case ToolCallFamily::DeepSeek:
            return literal("<｜tool▁calls▁begin｜>") + " " + calls("tool-call", R"("\n")") + " " +
                   literal("<｜tool▁calls▁end｜>");
        case ToolCallFamily::FunctionaryV31: return calls("tool-call", R"("\n")");
        // The generation prompt ends in ">>>": the first call comes without it.
        case ToolCallFamily::FunctionaryV32: return calls("tool-call", R"(">>>")");
        // One call a turn: <|call|> ends generation.
        case ToolCallFamily::Harmony: return "tool-call";
        case ToolCallFamily::Generic: break;
    }
    return R"("{\"tool_calls\":[" )" + calls("tool-call", R"(",")") + R"( "]}")";
}

}  // namespace

Expected<std::string> tool_call_gbnf(const ToolRequest& tools, ToolCallFamily family, const GrammarLimits& limits) {
    if (!tools.forced()) return Status::error("tool calls are only forced with tool_choice \"required\" or a named function");
    std::string alternatives, rules;
    for (size_t i = 0; i < tools.names.size(); ++i) {
        const std::string& name = tools.names[i];
        if (tools.choice == ToolChoice::Named && name != tools.named) continue;
        const Json& params = tools.parameters[i];
        // No parameters: any object ({}), as OpenAI reads an absent schema.
        const std::string schema =
            params.empty() ? std::string(R"({"type":"object"})") : params.dump(-1, ' ', false, Json::error_handler_t::replace);
        const std::string args = "args-" + std::to_string(i);  // each tool's rules in its own namespace
        auto compiled = json_schema_rules(schema, args, limits);
        if (!compiled.ok()) return Status::error("tool '" + name + "': " + compiled.error());
        rules += *compiled;
        alternatives += (alternatives.empty() ? "" : " | ") + call_syntax(family, name, args);
    }
    return "root ::= " + wrap(family, tools.parallel) + "\ntool-call ::= " + alternatives + "\n" + rules +
           json_primitives_gbnf();
}

std::vector<int32_t> tool_call_marker_tokens(const Tokenizer& tokenizer, ToolCallFamily family) {
    std::vector<int32_t> out;
    for (std::string_view marker : tool_call_markers(family)) {
        const std::vector<int32_t> ids = tokenizer.encode(marker, {.parse_special = true});
        if (ids.size() == 1 && tokenizer.token_to_piece(ids[0]).empty() &&
            tokenizer.token_to_piece(ids[0], {.render_special = true}) == marker) {
            out.push_back(ids[0]);
        }
    }
    return out;
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
