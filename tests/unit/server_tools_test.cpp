// Tool calling in the server: the request fields and their 400s
// (server/tool_request), the grammar forcing a call (server/tool_grammar,
// checked with GrammarMatcher), and the response and stream shapes
// (server/tool_response, openai_response). No model needed.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/token_mask.h"
#include "sample/grammar_constraint.h"
#include "server/openai_response.h"
#include "server/tool_grammar.h"
#include "server/tool_request.h"
#include "server/tool_response.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

const char* kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}}},
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
    "properties": {"tz": {"$ref": "#/$defs/zone"}}, "required": ["tz"], "$defs": {"zone": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "ping"}}])";

Json body_with(const std::string& extra) {
    return *parse_json(std::string(R"({"messages": [], "tools": )") + kTools + extra + "}");
}

ToolRequest read_ok(const std::string& extra) {
    ToolRequest out;
    auto err = read_tool_request(body_with(extra), out);
    EXPECT_FALSE(err) << err->message;
    return out;
}

void expect_400(const std::string& body, const std::string& param, const std::string& says) {
    ToolRequest out;
    auto err = read_tool_request(*parse_json(body), out);
    ASSERT_TRUE(err) << body;
    EXPECT_EQ(err->http_status, 400);
    EXPECT_EQ(err->param, param) << body;
    EXPECT_NE(err->message.find(says), std::string::npos) << err->message;
}

TEST(ToolRequest, ChoicesAndDefaults) {
    ToolRequest none;
    ASSERT_FALSE(read_tool_request(*parse_json(R"({"messages": []})"), none));
    EXPECT_EQ(none.choice, ToolChoice::None);
    EXPECT_FALSE(none.offered());
    const ToolRequest dflt = read_ok("");
    EXPECT_EQ(dflt.choice, ToolChoice::Auto);
    EXPECT_EQ(dflt.names, (std::vector<std::string>{"get_weather", "get_time", "ping"}));
    EXPECT_TRUE(dflt.parameters[2].empty());
    EXPECT_TRUE(dflt.parallel);
    EXPECT_EQ(read_ok(R"(, "tool_choice": "required", "parallel_tool_calls": false)").choice, ToolChoice::Required);
    EXPECT_FALSE(read_ok(R"(, "parallel_tool_calls": false)").parallel);
    EXPECT_FALSE(read_ok(R"(, "tool_choice": "none")").offered());
    const ToolRequest named = read_ok(R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}})");
    EXPECT_EQ(named.choice, ToolChoice::Named);
    EXPECT_EQ(named.named, "get_time");
    EXPECT_TRUE(named.forced());
}

TEST(ToolRequest, ClearFourHundreds) {
    const std::string tools = std::string(R"({"messages": [], "tools": )") + kTools;
    expect_400(tools + R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}}})", "tool_choice",
               "'nope', which is not among");
    expect_400(tools + R"(, "tool_choice": "sometimes"})", "tool_choice", "must be");
    expect_400(R"({"tool_choice": "required"})", "tool_choice", "has no 'tools'");
    expect_400(R"({"tools": {}})", "tools", "must be a list");
    expect_400(R"({"tools": [{"type": "retrieval"}]})", "tools", "tools[0].type");
    expect_400(R"({"tools": [{"type": "function", "function": {"name": "a b"}}]})", "tools", "function.name");
    expect_400(R"({"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]})", "tools",
               "JSON Schema object");
    expect_400(R"({"tools": [{"type": "function", "function": {"name": "f"}},
                            {"type": "function", "function": {"name": "f"}}]})", "tools", "used twice");
    expect_400(tools + R"(, "parallel_tool_calls": "yes"})", "parallel_tool_calls", "boolean");
}

// Whether the whole text is a complete match of the grammar.
bool accepts(const Grammar& g, const std::string& text) {
    GrammarMatcher m(std::make_shared<const Grammar>(g));
    return m.advance(text) && m.accepting();
}

Grammar forced(const std::string& extra, ToolCallFamily family) {
    auto g = compile_tool_call_grammar(read_ok(extra), family);
    EXPECT_TRUE(g.ok()) << g.error();
    return std::move(*g);
}

TEST(ToolGrammar, RequiredAcceptsEachToolsValidCallsOnly) {
    const Grammar g = forced(R"(, "tool_choice": "required", "parallel_tool_calls": false)", ToolCallFamily::Hermes);
    EXPECT_TRUE(accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"location\":\"Paris\"}}\n</tool_call>"));
    EXPECT_TRUE(accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"location\":\"Oslo\",\"unit\":\"celsius\"}}\n</tool_call>"));
    EXPECT_TRUE(accepts(g, "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"tz\":\"UTC\"}}\n</tool_call>"));
    EXPECT_TRUE(accepts(g, "<tool_call>\n{\"name\":\"ping\",\"arguments\":{}}\n</tool_call>"));
    // unknown function, missing required argument, wrong enum, extra key, wrong type
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"rm\",\"arguments\":{}}\n</tool_call>"));
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>"));
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"location\":\"P\",\"unit\":\"K\"}}\n</tool_call>"));
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"ping\",\"arguments\":{\"x\":1}}\n</tool_call>"));
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"tz\":3}}\n</tool_call>"));
    // not parallel: one call only; and no free text
    EXPECT_FALSE(accepts(g, "<tool_call>\n{\"name\":\"ping\",\"arguments\":{}}\n</tool_call>\n"
                            "<tool_call>\n{\"name\":\"ping\",\"arguments\":{}}\n</tool_call>"));
    EXPECT_FALSE(accepts(g, "Sure! <tool_call>\n{\"name\":\"ping\",\"arguments\":{}}\n</tool_call>"));
}

TEST(ToolGrammar, NamedAndParallelPerFamily) {
    const std::string named = R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}})";
    const Grammar llama = forced(named, ToolCallFamily::Llama3);
    EXPECT_TRUE(accepts(llama, "{\"name\":\"get_time\",\"parameters\":{\"tz\":\"UTC\"}}"));
    EXPECT_TRUE(accepts(llama, "{\"name\":\"get_time\",\"parameters\":{\"tz\":\"UTC\"}}; {\"name\":\"get_time\",\"parameters\":{\"tz\":\"CET\"}}"));
    EXPECT_FALSE(accepts(llama, "{\"name\":\"ping\",\"parameters\":{}}"));  // not the named one
    const Grammar mistral = forced(named, ToolCallFamily::Mistral);
    EXPECT_TRUE(accepts(mistral, "[TOOL_CALLS][{\"name\":\"get_time\",\"arguments\":{\"tz\":\"a\"}},{\"name\":\"get_time\",\"arguments\":{\"tz\":\"b\"}}]"));
    std::string eight = "{\"name\":\"get_time\",\"parameters\":{\"tz\":\"UTC\"}}";
    for (int i = 1; i < 8; ++i) eight += "; {\"name\":\"get_time\",\"parameters\":{\"tz\":\"UTC\"}}";
    EXPECT_TRUE(accepts(llama, eight));
    EXPECT_FALSE(accepts(llama, eight + "; {\"name\":\"get_time\",\"parameters\":{\"tz\":\"UTC\"}}"));  // at most 8
    const Grammar generic = forced(named, ToolCallFamily::Generic);
    const std::string call = "{\"tool_calls\":[{\"name\":\"get_time\",\"arguments\":{\"tz\":\"UTC\"}}]}";
    EXPECT_TRUE(accepts(generic, call));
    EXPECT_FALSE(accepts(generic, "{\"tool_calls\":[]}"));
    // What the grammar admits is what the parser reads back as calls.
    auto parsed = parse_tool_calls(call, ToolCallFamily::Generic);
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0].arguments, "{\"tz\":\"UTC\"}");
}

TEST(ToolGrammar, RefusesWhatItCannotEnforce) {
    ToolRequest bad;
    ASSERT_FALSE(read_tool_request(*parse_json(R"({"tool_choice": "required", "tools": [{"type": "function", "function":
        {"name": "f", "parameters": {"type": "object", "properties": {"s": {"type": "string", "not": {"const": "a"}}}}}}]})"), bad));
    auto g = tool_call_gbnf(bad, ToolCallFamily::Hermes);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().find("'not'"), std::string::npos) << g.error();
    EXPECT_FALSE(tool_call_gbnf(read_ok(""), ToolCallFamily::Hermes).ok());  // auto: nothing to force
}

// Each tool's schema compiles in its own namespace: a recursive "#" ref and
// two tools defining the same $defs name differently both work.
TEST(ToolGrammar, ToolSchemasDoNotShareRules) {
    ToolRequest tools;
    ASSERT_FALSE(read_tool_request(*parse_json(R"({"tool_choice": "required", "tools": [
        {"type": "function", "function": {"name": "tree", "parameters": {"type": "object",
          "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}, "required": ["kids"]}}},
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object",
          "properties": {"v": {"$ref": "#/$defs/x"}}, "required": ["v"], "$defs": {"x": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": "object",
          "properties": {"v": {"$ref": "#/$defs/x"}}, "required": ["v"], "$defs": {"x": {"type": "string"}}}}}]})"),
                                   tools));
    auto g = compile_tool_call_grammar(tools, ToolCallFamily::Hermes);
    ASSERT_TRUE(g.ok()) << g.error();
    auto call = [](const std::string& json) { return "<tool_call>\n" + json + "\n</tool_call>"; };
    EXPECT_TRUE(accepts(*g, call(R"({"name":"tree","arguments":{"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]}})")));
    EXPECT_TRUE(accepts(*g, call(R"({"name":"a","arguments":{"v":3}})")));
    EXPECT_TRUE(accepts(*g, call(R"({"name":"b","arguments":{"v":"3"}})")));
    EXPECT_FALSE(accepts(*g, call(R"({"name":"a","arguments":{"v":"3"}})")));
    EXPECT_FALSE(accepts(*g, call(R"({"name":"b","arguments":{"v":3}})")));
}

// The families that write the name outside the JSON: the grammar admits
// exactly the calls the parser reads back.
TEST(ToolGrammar, NameOutsideTheJsonFamilies) {
    const std::string required = R"(, "tool_choice": "required")";
    const std::string named = R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}})";
    const std::string ds_call = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"tz\":\"UTC\"}\n```<｜tool▁call▁end｜>";
    const std::string ds_ping = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>ping\n```json\n{}\n```<｜tool▁call▁end｜>";
    const std::string ds = "<｜tool▁calls▁begin｜>" + ds_call + "\n" + ds_ping + "<｜tool▁calls▁end｜>";
    EXPECT_TRUE(accepts(forced(required, ToolCallFamily::DeepSeek), ds));
    const Grammar ds_named = forced(named, ToolCallFamily::DeepSeek);
    EXPECT_FALSE(accepts(ds_named, ds));  // ping is not the named one
    EXPECT_TRUE(accepts(ds_named, "<｜tool▁calls▁begin｜>" + ds_call + "<｜tool▁calls▁end｜>"));
    auto parsed = parse_tool_calls(ds, ToolCallFamily::DeepSeek);
    ASSERT_EQ(parsed.calls.size(), 2u);
    EXPECT_EQ(parsed.calls[0].arguments, "{\"tz\":\"UTC\"}");

    const std::string v31 = "<function=get_weather>{\"location\":\"Paris\"}</function>\n<function=ping>{}</function>";
    EXPECT_TRUE(accepts(forced(required, ToolCallFamily::FunctionaryV31), v31));
    EXPECT_FALSE(accepts(forced(named, ToolCallFamily::FunctionaryV31), v31));
    EXPECT_EQ(parse_tool_calls(v31, ToolCallFamily::FunctionaryV31).calls.size(), 2u);

    const std::string v32 = "get_time\n{\"tz\":\"UTC\"}>>>get_time\n{\"tz\":\"CET\"}";
    EXPECT_TRUE(accepts(forced(named, ToolCallFamily::FunctionaryV32), v32));
    EXPECT_FALSE(accepts(forced(named, ToolCallFamily::FunctionaryV32), "all\nhi"));
    auto v32_calls = parse_tool_calls(v32, ToolCallFamily::FunctionaryV32);
    ASSERT_EQ(v32_calls.calls.size(), 2u);
    EXPECT_EQ(v32_calls.calls[1].arguments, "{\"tz\":\"CET\"}");

    // Harmony: one call a turn (<|call|> ends generation), parsed back.
    const std::string harmony = "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"tz\":\"UTC\"}";
    EXPECT_TRUE(accepts(forced(named, ToolCallFamily::Harmony), harmony));
    EXPECT_TRUE(accepts(forced(required, ToolCallFamily::Harmony), harmony));
    EXPECT_FALSE(accepts(forced(required, ToolCallFamily::Harmony), harmony + harmony));
    auto harmony_calls = parse_tool_calls(harmony, ToolCallFamily::Harmony);
    ASSERT_EQ(harmony_calls.calls.size(), 1u);
    EXPECT_EQ(harmony_calls.calls[0].name, "get_time");
}

// A byte-level vocabulary whose Mistral marker is a control token, as in
// Mistral's own: 256 byte tokens, then [TOOL_CALLS] (control), </s>, "ab".
constexpr int32_t kToolCallsToken = 256;
constexpr int32_t kEndToken = 257;

Tokenizer marker_tokenizer() {
    ByteLevelMap map;
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) s.tokens.push_back(map.byte_text(static_cast<uint8_t>(b)));
    s.types.assign(256, static_cast<int32_t>(TokenType::Normal));
    for (const char* special : {"[TOOL_CALLS]", "</s>"}) {
        s.tokens.push_back(special);
        s.types.push_back(static_cast<int32_t>(TokenType::Control));
    }
    s.tokens.push_back("ab");  // BPE needs a merge
    s.types.push_back(static_cast<int32_t>(TokenType::Normal));
    s.merges.push_back("a b");
    s.eos = kEndToken;
    auto vocab = Vocab::create(std::move(s));
    EXPECT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    EXPECT_TRUE(tok.ok()) << tok.error();
    return std::move(*tok);
}

// A forced Mistral call opens with the [TOOL_CALLS] control token, which the
// mask allows only where the grammar admits its text; the output, rendered
// with that token's text, parses as the call.
TEST(ToolGrammar, ControlTokenMarkerIsAllowedWhereTheGrammarWantsIt) {
    const Tokenizer tok = marker_tokenizer();
    EXPECT_EQ(tool_call_marker_tokens(tok, ToolCallFamily::Mistral), std::vector<int32_t>{kToolCallsToken});
    EXPECT_TRUE(tool_call_marker_tokens(tok, ToolCallFamily::DeepSeek).empty());  // spelled in bytes here
    const auto vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::from_tokenizer(tok));
    const auto grammar = std::make_shared<const Grammar>(
        forced(R"(, "tool_choice": {"type": "function", "function": {"name": "ping"}}, "parallel_tool_calls": false)",
               ToolCallFamily::Mistral));
    auto allowed = [](GrammarConstraint& c, int32_t token) {
        std::vector<float> logits(kEndToken + 2, 0.0f);
        const auto row = c.mask(logits);
        return !row.empty() && row[static_cast<size_t>(token)] == 0.0f;
    };
    GrammarConstraint plain(grammar, vocab);  // no markers: control tokens never pass
    EXPECT_FALSE(allowed(plain, kToolCallsToken));
    EXPECT_TRUE(allowed(plain, '['));

    GrammarConstraint c(grammar, vocab, nullptr, {{kToolCallsToken, "[TOOL_CALLS]"}});
    EXPECT_TRUE(allowed(c, kToolCallsToken));
    EXPECT_TRUE(allowed(c, '['));  // the text spelled in bytes stays allowed
    EXPECT_EQ(c.forced_tokens(8), std::vector<int32_t>{kToolCallsToken});  // jump-forward drafts the marker
    ASSERT_TRUE(c.accept(kToolCallsToken));
    std::vector<int32_t> out = {kToolCallsToken};
    EXPECT_FALSE(allowed(c, kToolCallsToken));  // not where the grammar wants '['
    for (int32_t t : c.forced_tokens(64)) {
        ASSERT_TRUE(c.accept(t));
        out.push_back(t);
    }
    EXPECT_TRUE(c.complete());
    const std::string text = tok.decode(out, {.render_special = true});
    EXPECT_EQ(text, "[TOOL_CALLS][{\"name\":\"ping\",\"arguments\":{}}]");
    auto parsed = parse_tool_calls(text, ToolCallFamily::Mistral);
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0].name, "ping");
}

TEST(ToolResponse, MessageToolCallsAndFinishReason) {
    ResponseMeta meta{.kind = ApiKind::Chat, .id = "chatcmpl-1", .created = 1, .model = "m",
                      .tool_family = ToolCallFamily::Hermes, .tool_call_seed = 7};
    std::vector<ChoiceResult> choices(2);
    choices[0].finish = FinishReason::Stop;
    choices[0].tool_calls = {{"get_weather", "{\"location\":\"Paris\"}"}, {"ping", "{}"}};
    choices[1].text = "plain";
    choices[1].finish = FinishReason::Stop;
    const Json j = response_json(meta, choices, {}, [](int32_t) { return std::string(); });
    const Json& msg = j["choices"][0]["message"];
    EXPECT_TRUE(msg["content"].is_null());
    ASSERT_EQ(msg["tool_calls"].size(), 2u);
    EXPECT_EQ(msg["tool_calls"][0]["type"], "function");
    EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
    EXPECT_EQ(msg["tool_calls"][0]["function"]["arguments"], "{\"location\":\"Paris\"}");
    const std::string id0 = msg["tool_calls"][0]["id"], id1 = msg["tool_calls"][1]["id"];
    EXPECT_EQ(id0.rfind("call_", 0), 0u);
    EXPECT_EQ(id0.size(), 29u);
    EXPECT_NE(id0, id1);
    EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
    EXPECT_EQ(j["choices"][1]["message"]["content"], "plain");
    EXPECT_FALSE(j["choices"][1]["message"].contains("tool_calls"));
    EXPECT_EQ(j["choices"][1]["finish_reason"], "stop");
    const std::string mistral = tool_call_id(ToolCallFamily::Mistral, 7, 0, 0);
    EXPECT_EQ(mistral.size(), 9u);  // Mistral's templates demand 9 alphanumerics
}

TEST(ToolResponse, ReasoningContentInTheMessageAndTheStream) {
    ResponseMeta meta{.kind = ApiKind::Chat, .id = "c", .created = 1, .model = "m",
                      .tool_family = ToolCallFamily::Harmony};
    std::vector<ChoiceResult> choices(2);
    choices[0].text = "Hi.";
    choices[0].reasoning = "User greets.";
    choices[0].finish = FinishReason::Stop;
    choices[1].text = "Hello.";
    choices[1].finish = FinishReason::Stop;
    const Json j = response_json(meta, choices, {}, [](int32_t) { return std::string(); });
    EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], "User greets.");
    EXPECT_EQ(j["choices"][0]["message"]["content"], "Hi.");
    EXPECT_FALSE(j["choices"][1]["message"].contains("reasoning_content"));
    const Json chunk = chunk_json(meta, ChunkPart{.reasoning = "Thinking."}, false);
    EXPECT_EQ(chunk["choices"][0]["delta"]["reasoning_content"], "Thinking.");
    EXPECT_FALSE(chunk["choices"][0]["delta"].contains("content"));
}

TEST(ToolResponse, StreamHoldsBackCallsAndReleasesProse) {
    ToolCallStream s(ToolCallFamily::Hermes);
    std::string content;
    for (const char* piece : {"Let me ", "check. <", "tool_", "call>\n{\"name\": \"ping\", ", "\"arguments\": {}}\n</tool_call>"}) {
        content += s.push(piece);
    }
    EXPECT_EQ(content, "Let me check. ");
    ToolCallOutput rest = s.finish();
    ASSERT_EQ(rest.calls.size(), 1u);
    EXPECT_EQ(rest.calls[0].name, "ping");
    EXPECT_EQ(rest.content, "");

    ToolCallStream prose(ToolCallFamily::Hermes);
    std::string out = prose.push("a <too");
    EXPECT_EQ(out, "a ");
    out += prose.push("th");
    EXPECT_EQ(out, "a <tooth");  // the partial marker did not become one
    EXPECT_TRUE(prose.finish().calls.empty());

    ToolCallStream broken(ToolCallFamily::Llama3);
    EXPECT_EQ(broken.push("{\"name\": "), "");
    ToolCallOutput held = broken.finish();
    EXPECT_TRUE(held.calls.empty());
    EXPECT_EQ(held.content, "{\"name\": ");  // malformed: sent as content at the end
}

TEST(ToolResponse, StreamDeltas) {
    const ToolCall call{"get_time", "{\"tz\":\"UTC\"}"};
    const Json head = tool_call_head_delta(call, 1, ToolCallFamily::Generic, 3, 0);
    EXPECT_EQ(head[0]["index"], 1);
    EXPECT_EQ(head[0]["id"], tool_call_id(ToolCallFamily::Generic, 3, 0, 1));
    EXPECT_EQ(head[0]["function"]["name"], "get_time");
    EXPECT_EQ(head[0]["function"]["arguments"], "");
    const Json args = tool_call_arguments_delta(call, 1);
    EXPECT_EQ(args[0]["function"]["arguments"], "{\"tz\":\"UTC\"}");
    EXPECT_FALSE(args[0].contains("id"));
    ResponseMeta meta{.kind = ApiKind::Chat, .id = "c", .created = 1, .model = "m"};
    const Json chunk = chunk_json(meta, ChunkPart{.index = 0, .tool_calls = head}, false);
    EXPECT_EQ(chunk["choices"][0]["delta"]["tool_calls"], head);
    EXPECT_FALSE(chunk["choices"][0]["delta"].contains("content"));
    const Json last = chunk_json(meta, ChunkPart{.index = 0, .finish = FinishReason::Stop, .tool_calls_finish = true}, false);
    EXPECT_EQ(last["choices"][0]["finish_reason"], "tool_calls");
}

}  // namespace
}  // namespace tessera
