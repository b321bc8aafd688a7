// Tool calls in generated text, per family (template/tool_calls.h), and the
// message forms chat templates get (template/tool_messages.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fixtures.h"
#include "template/chat_render.h"
#include "template/tool_calls.h"
#include "template/tool_messages.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

std::string read_fixture(const std::string& name) {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/../shared/fixtures/chat_templates/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(ToolCallFamily, RecognisedFromTheFixtureTemplates) {
    EXPECT_EQ(tool_call_family(read_fixture("Qwen-Qwen2.5-7B-Instruct.jinja")), ToolCallFamily::Hermes);
    EXPECT_EQ(tool_call_family(read_fixture("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja")), ToolCallFamily::Hermes);
    EXPECT_EQ(tool_call_family(read_fixture("meta-llama-Llama-3.1-8B-Instruct.jinja")), ToolCallFamily::Llama3);
    EXPECT_EQ(tool_call_family(read_fixture("mistralai-Mistral-Nemo-Instruct-2407.jinja")), ToolCallFamily::Mistral);
    EXPECT_EQ(tool_call_family(read_fixture("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja")), ToolCallFamily::DeepSeek);
    EXPECT_EQ(tool_call_family(read_fixture("google-gemma-2-2b-it.jinja")), ToolCallFamily::Generic);
    EXPECT_EQ(tool_call_family(read_fixture("microsoft-Phi-3.5-mini-instruct.jinja")), ToolCallFamily::Generic);
}

TEST(ToolCallFamily, ProbeFindsWhichTemplatesShowTools) {
    for (const char* name : {"Qwen-Qwen2.5-7B-Instruct.jinja", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
                             "meta-llama-Llama-3.1-8B-Instruct.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja"}) {
        EXPECT_TRUE(ChatTemplate(read_fixture(name), "<s>", "</s>").shows_tools()) << name;
    }
    for (const char* name : {"google-gemma-2-2b-it.jinja", "microsoft-Phi-3.5-mini-instruct.jinja",
                             "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"}) {
        EXPECT_FALSE(ChatTemplate(read_fixture(name), "<s>", "</s>").shows_tools()) << name;
    }
    EXPECT_FALSE(ChatTemplate(chatml_template(), "", "").shows_tools());
    EXPECT_FALSE(ChatTemplate("{% if %}", "", "").shows_tools());  // does not compile
}

TEST(ToolCallParse, HermesCallsAndContent) {
    auto out = parse_tool_calls(
        "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>\n"
        "<tool_call>{\"name\": \"get_time\", \"arguments\": \"{\\\"tz\\\": \\\"UTC\\\"}\"}</tool_call>",
        ToolCallFamily::Hermes);
    ASSERT_EQ(out.calls.size(), 2u);
    EXPECT_EQ(out.content, "Let me look.");
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, "{\"location\":\"Paris\"}");
    EXPECT_EQ(out.calls[1].name, "get_time");
    EXPECT_EQ(out.calls[1].arguments, "{\"tz\":\"UTC\"}");  // a string holding an object is unwrapped
}

TEST(ToolCallParse, HermesUnclosedLastCallStillParses) {
    auto out = parse_tool_calls("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n", ToolCallFamily::Hermes);
    ASSERT_EQ(out.calls.size(), 1u);
    EXPECT_EQ(out.calls[0].arguments, "{}");
    EXPECT_EQ(out.content, "");
}

TEST(ToolCallParse, Llama3JsonPythonTagAndSemicolons) {
    auto one = parse_tool_calls("{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Oslo\"}}", ToolCallFamily::Llama3);
    ASSERT_EQ(one.calls.size(), 1u);
    EXPECT_EQ(one.calls[0].arguments, "{\"location\":\"Oslo\"}");
    auto tagged = parse_tool_calls("<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"arguments\": {\"x\": 1}}",
                                   ToolCallFamily::Llama3);
    ASSERT_EQ(tagged.calls.size(), 2u);
    EXPECT_EQ(tagged.calls[1].name, "b");
    EXPECT_EQ(tagged.calls[1].arguments, "{\"x\":1}");
    // A JSON answer that is not a call, or prose, stays content.
    EXPECT_TRUE(parse_tool_calls("{\"answer\": 42}", ToolCallFamily::Llama3).calls.empty());
    EXPECT_TRUE(parse_tool_calls("The answer is {\"name\": \"a\"}", ToolCallFamily::Llama3).calls.empty());
}

TEST(ToolCallParse, MistralArray) {
    auto out = parse_tool_calls("[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Rome\"}, \"id\": \"abc123def\"},"
                                " {\"name\": \"get_time\", \"arguments\": {}}]",
                                ToolCallFamily::Mistral);
    ASSERT_EQ(out.calls.size(), 2u);
    EXPECT_EQ(out.calls[0].arguments, "{\"location\":\"Rome\"}");
    EXPECT_EQ(out.calls[1].name, "get_time");
    EXPECT_EQ(out.content, "");
}

TEST(ToolCallParse, GenericWrapperSingleCallAndFence) {
    auto wrapped = parse_tool_calls("{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}]}", ToolCallFamily::Generic);
    ASSERT_EQ(wrapped.calls.size(), 1u);
    EXPECT_EQ(wrapped.calls[0].arguments, "{\"a\":[1,2]}");
    auto fenced = parse_tool_calls("Sure.\n```json\n{\"name\": \"f\", \"arguments\": {}}\n```\n", ToolCallFamily::Generic);
    ASSERT_EQ(fenced.calls.size(), 1u);
    EXPECT_EQ(fenced.content, "Sure.");
    EXPECT_TRUE(parse_tool_calls("Plain answer with {braces}.", ToolCallFamily::Generic).calls.empty());
}

TEST(ToolCallParse, DeepSeekCalls) {
    const std::string text =
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        "{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>ping\n"
        "```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    auto out = parse_tool_calls(text, ToolCallFamily::DeepSeek);
    ASSERT_EQ(out.calls.size(), 2u);
    EXPECT_EQ(out.content, "Checking.");
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, "{\"location\":\"Paris\"}");
    EXPECT_EQ(out.calls[1].name, "ping");
    // no fence, or no end marker of the call: content
    for (const std::string bad : {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜>",
                                  "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```"}) {
        EXPECT_TRUE(parse_tool_calls(bad, ToolCallFamily::DeepSeek).calls.empty()) << bad;
    }
    EXPECT_EQ(tool_call_start("ok <｜tool", ToolCallFamily::DeepSeek, false), 3u);
}

std::string read_test_template(const std::string& name) {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/e2e/templates/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(ToolCallFamily, FunctionaryTemplatesShowToolsAndAreRecognised) {
    const std::string v31 = read_test_template("functionary_v31.jinja");
    const std::string v32 = read_test_template("functionary_v32.jinja");
    ASSERT_FALSE(v31.empty());
    ASSERT_FALSE(v32.empty());
    EXPECT_EQ(tool_call_family(v31), ToolCallFamily::FunctionaryV31);  // though it has ipython turns
    EXPECT_EQ(tool_call_family(v32), ToolCallFamily::FunctionaryV32);
    EXPECT_STREQ(tool_call_family_name(ToolCallFamily::FunctionaryV32), "functionary-v3.2");
    EXPECT_TRUE(ChatTemplate(v31, "", "").shows_tools());
    EXPECT_TRUE(ChatTemplate(v32, "", "").shows_tools());
}

TEST(ToolCallParse, FunctionaryV31) {
    auto out = parse_tool_calls("Looking.<function=get_weather>{\"location\": \"Paris\"}</function>\n"
                                "<function=ping>{}</function>",
                                ToolCallFamily::FunctionaryV31);
    ASSERT_EQ(out.calls.size(), 2u);
    EXPECT_EQ(out.content, "Looking.");
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, "{\"location\":\"Paris\"}");
    EXPECT_EQ(out.calls[1].name, "ping");
    // the close cut off by max_tokens: still a call
    EXPECT_EQ(parse_tool_calls("<function=f>{\"a\":1}", ToolCallFamily::FunctionaryV31).calls.size(), 1u);
    for (const char* bad : {"<function=f>not json</function>", "<function=>{}</function>", "<function=f {}",
                            "<function=f>{\"a\":</function>", "<function=f>[1]</function>"}) {
        auto o = parse_tool_calls(bad, ToolCallFamily::FunctionaryV31);
        EXPECT_TRUE(o.calls.empty()) << bad;
        EXPECT_EQ(o.content, bad);
    }
    EXPECT_EQ(tool_call_start("Sure <func", ToolCallFamily::FunctionaryV31, false), 5u);
}

TEST(ToolCallParse, FunctionaryV32Sections) {
    // The prompt ended in ">>>": the first recipient comes without it.
    auto call = parse_tool_calls("get_weather\n{\"location\": \"Oslo\"}>>>ping\n{}", ToolCallFamily::FunctionaryV32);
    ASSERT_EQ(call.calls.size(), 2u);
    EXPECT_EQ(call.calls[0].name, "get_weather");
    EXPECT_EQ(call.calls[0].arguments, "{\"location\":\"Oslo\"}");
    EXPECT_EQ(call.calls[1].name, "ping");
    EXPECT_EQ(call.content, "");
    auto mixed = parse_tool_calls("all\nLet me check.>>>ping\n{}", ToolCallFamily::FunctionaryV32);
    ASSERT_EQ(mixed.calls.size(), 1u);
    EXPECT_EQ(mixed.content, "Let me check.");
    // prose only: the "all" header is syntax, not content
    auto prose = parse_tool_calls("all\nParis is the capital.", ToolCallFamily::FunctionaryV32);
    EXPECT_TRUE(prose.calls.empty());
    EXPECT_EQ(prose.content, "Paris is the capital.");
    // text without a recipient line stays as it is
    for (const char* plain : {"Paris is the capital.", "Hello\nworld", ">>>"}) {
        auto o = parse_tool_calls(plain, ToolCallFamily::FunctionaryV32);
        EXPECT_TRUE(o.calls.empty()) << plain;
        EXPECT_EQ(o.content, ">>>" == std::string(plain) ? "" : plain);
    }
    // a malformed later section: all of it content
    const std::string bad = "all\nx>>>f\n{\"a\":";
    auto o = parse_tool_calls(bad, ToolCallFamily::FunctionaryV32);
    EXPECT_TRUE(o.calls.empty());
    EXPECT_EQ(o.content, bad);
    // Streaming: a recipient line at the start holds from 0; prose from its first ">>>".
    EXPECT_EQ(tool_call_start("get_wea", ToolCallFamily::FunctionaryV32, false), 0u);
    EXPECT_EQ(tool_call_start("all\nHi", ToolCallFamily::FunctionaryV32, false), 0u);
    EXPECT_EQ(tool_call_start("Hi there>", ToolCallFamily::FunctionaryV32, false), 8u);
    EXPECT_EQ(tool_call_start("Hi there", ToolCallFamily::FunctionaryV32, true), 8u);
    EXPECT_EQ(tool_call_start("Hi there>>>f\n{}", ToolCallFamily::FunctionaryV32, false, 3), 8u);
}

TEST(ToolCallParse, MalformedOutputStaysContent) {
    const std::pair<const char*, ToolCallFamily> cases[] = {
        {"<tool_call>{\"name\": \"f\", \"arguments\": {</tool_call>", ToolCallFamily::Hermes},
        {"<tool_call>{\"arguments\": {}}</tool_call>", ToolCallFamily::Hermes},  // no name
        {"<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>", ToolCallFamily::Hermes},  // not an object
        {"<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>", ToolCallFamily::Hermes},
        {"[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}", ToolCallFamily::Mistral},  // unclosed
        {"[TOOL_CALLS] []", ToolCallFamily::Mistral},
        {"{\"name\": \"f\", \"parameters\": {}} trailing", ToolCallFamily::Llama3},
        {"{\"tool_calls\": [{\"name\": 3}]}", ToolCallFamily::Generic},
        {"{\"tool_calls\": \"x\"}", ToolCallFamily::Generic},
    };
    for (const auto& [text, family] : cases) {
        auto out = parse_tool_calls(text, family);
        EXPECT_TRUE(out.calls.empty()) << text;
        EXPECT_EQ(out.content, text);
    }
}

TEST(ToolCallParse, DeepOrHugeArgumentsAreRefusedNotRecursed) {
    const std::string deep = "<tool_call>{\"name\": \"f\", \"arguments\": " + std::string(100000, '[') + "}</tool_call>";
    EXPECT_TRUE(parse_tool_calls(deep, ToolCallFamily::Hermes).calls.empty());
    std::string wide = "{\"name\": \"f\", \"arguments\": {";
    for (int i = 0; i < 5000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
    wide += "}}";
    EXPECT_TRUE(parse_tool_calls(wide, ToolCallFamily::Generic).calls.empty());
}

TEST(ToolCallStart, HoldsBackWhatMayBecomeACall) {
    EXPECT_EQ(tool_call_start("Hello", ToolCallFamily::Hermes, false), 5u);
    EXPECT_EQ(tool_call_start("Hello <tool", ToolCallFamily::Hermes, false), 6u);
    EXPECT_EQ(tool_call_start("Hello <tool", ToolCallFamily::Hermes, true), 11u);
    EXPECT_EQ(tool_call_start("x <tool_call>{", ToolCallFamily::Hermes, false), 2u);
    EXPECT_EQ(tool_call_start("  ", ToolCallFamily::Llama3, false), 0u);
    EXPECT_EQ(tool_call_start(" {\"na", ToolCallFamily::Llama3, false), 0u);
    EXPECT_EQ(tool_call_start("Sure", ToolCallFamily::Llama3, false), 4u);
    EXPECT_EQ(tool_call_start(" <|pyth", ToolCallFamily::Llama3, false), 0u);
    EXPECT_EQ(tool_call_start("Sure <|python_tag|>{", ToolCallFamily::Llama3, false), 20u);
    EXPECT_EQ(tool_call_start("ok [TOOL_", ToolCallFamily::Mistral, false), 3u);
    EXPECT_EQ(tool_call_start("Text {", ToolCallFamily::Generic, false), 5u);
    EXPECT_EQ(tool_call_start("Text `", ToolCallFamily::Generic, false), 5u);
    EXPECT_EQ(tool_call_start("Text", ToolCallFamily::Generic, true), 4u);
    // `from` skips text already known to hold no start, with the same answer.
    EXPECT_EQ(tool_call_start("Hello <tool", ToolCallFamily::Hermes, false, 6), 6u);
    EXPECT_EQ(tool_call_start("ab <tool_call>", ToolCallFamily::Hermes, false, 2), 3u);
    EXPECT_EQ(tool_call_start("Text {", ToolCallFamily::Generic, false, 5), 5u);
    EXPECT_EQ(tool_call_start("Text", ToolCallFamily::Generic, false, 9), 4u);
}

TEST(ToolMessages, FormsOfACallConversation) {
    const Json messages = Json::parse(R"([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "name": "g", "content": "r2"}])");
    EXPECT_TRUE(has_tool_messages(messages));
    EXPECT_FALSE(has_tool_messages(Json::parse(R"([{"role": "user", "content": "x"}])")));
    const Json objects = tool_message_form(messages, ToolMessageForm::Objects);
    EXPECT_EQ(objects[1]["tool_calls"][0]["function"]["arguments"], Json::parse(R"({"a":1})"));
    const Json strings = tool_message_form(objects, ToolMessageForm::Strings);
    EXPECT_EQ(strings[1]["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
    const Json plain = tool_message_form(messages, ToolMessageForm::Plain);
    ASSERT_EQ(plain.size(), 3u);  // the two tool results are one user turn
    EXPECT_EQ(plain[1]["content"], "{\"tool_calls\":[{\"name\":\"f\",\"arguments\":{\"a\":1}}]}");
    EXPECT_FALSE(plain[1].contains("tool_calls"));
    EXPECT_EQ(plain[2]["role"], "user");
    EXPECT_EQ(plain[2]["content"], "{\"tool_response\":{\"tool_call_id\":\"c1\",\"content\":\"r1\"}}\n"
                                   "{\"tool_response\":{\"tool_call_id\":\"c2\",\"name\":\"g\",\"content\":\"r2\"}}");
    // The generic call syntax in a past turn parses back as the same call.
    auto parsed = parse_tool_calls(plain[1]["content"].get<std::string>(), ToolCallFamily::Generic);
    ASSERT_EQ(parsed.calls.size(), 1u);
    EXPECT_EQ(parsed.calls[0].arguments, "{\"a\":1}");
}

TEST(ToolMessages, GenericPromptJoinsOrAddsTheSystemMessage) {
    const Json tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])");
    const Json with_system = with_generic_tool_prompt(Json::parse(R"([{"role": "system", "content": "Be brief."},
                                                                     {"role": "user", "content": "x"}])"), tools);
    ASSERT_EQ(with_system.size(), 2u);
    const std::string sys = with_system[0]["content"].get<std::string>();
    EXPECT_EQ(sys.rfind("Be brief.\n\n", 0), 0u);
    EXPECT_NE(sys.find("\"name\":\"get_weather\""), std::string::npos);
    const Json without = with_generic_tool_prompt(Json::parse(R"([{"role": "user", "content": "x"}])"), tools);
    ASSERT_EQ(without.size(), 2u);
    EXPECT_EQ(without[0]["role"], "system");
}

// gpt-oss's own template (llama.cpp's copy, fetched by tools/fetch_vocab_suite.sh).
std::string gpt_oss_template_path() {
    const char* env = std::getenv("TESSERA_VOCAB_SUITE");
    return (env && *env ? std::string(env) + "/" : std::string(TESSERA_SOURCE_DIR "/models/ggml-vocab/")) +
           "openai-gpt-oss-120b.jinja";
}

TEST(ToolCallFamily, GptOssTemplateIsHarmonyAndRendersACallConversation) {
    TESSERA_REQUIRE_FIXTURE(gpt_oss_template_path());
    std::ifstream in(gpt_oss_template_path());
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(tool_call_family(ss.str()), ToolCallFamily::Harmony);
    EXPECT_STREQ(tool_call_family_name(ToolCallFamily::Harmony), "harmony");
    const ChatTemplate t(ss.str(), "<|startoftext|>", "<|return|>");
    EXPECT_TRUE(t.shows_tools());
    const Json tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "Current weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
    const Json messages = Json::parse(R"([{"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "12 C"}])");
    auto out = t.render({.messages = messages, .tools = tools, .now_epoch_seconds = 1721995200});
    ASSERT_TRUE(out.ok()) << out.error();
    EXPECT_NE(out->find("namespace functions"), std::string::npos) << *out;
    EXPECT_NE(out->find("<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
                        "{\"city\": \"Oslo\"}<|call|>"),
              std::string::npos)
        << *out;
    EXPECT_NE(out->find("<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"),
              std::string::npos)
        << *out;
    EXPECT_TRUE(out->ends_with("<|start|>assistant")) << *out;
}

TEST(ToolCallParse, HarmonyChannelsAndCalls) {
    const ToolCallFamily h = ToolCallFamily::Harmony;
    // Reasoning, then the answer: only the final channel is content.
    auto answer = parse_tool_calls(
        "<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!", h);
    EXPECT_EQ(answer.content, "Hello!");
    EXPECT_EQ(answer.reasoning, "User greets.");
    EXPECT_TRUE(answer.calls.empty());
    EXPECT_EQ(parse_tool_calls("<tool_call>{\"name\": \"f\"}</tool_call>", ToolCallFamily::Hermes).reasoning, "");
    // A call with the recipient after the channel, and one before it (the template's own form).
    for (const char* text : {"<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
                             "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}",
                             " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}<|call|>"}) {
        auto call = parse_tool_calls(text, h);
        ASSERT_EQ(call.calls.size(), 1u) << text;
        EXPECT_EQ(call.calls[0].name, "get_weather");
        EXPECT_EQ(call.calls[0].arguments, R"({"city":"Oslo"})");
        EXPECT_EQ(call.content, "");
    }
    // A preamble to the user (commentary without a recipient) is content.
    auto preamble = parse_tool_calls("<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>"
                                     "commentary to=functions.ping<|message|>{}", h);
    EXPECT_EQ(preamble.content, "Checking.");
    ASSERT_EQ(preamble.calls.size(), 1u);
    // Cut during the reasoning (max_tokens): no content yet, the reasoning so far.
    EXPECT_EQ(parse_tool_calls("<|channel|>analysis<|message|>Let me thi", h).content, "");
    EXPECT_EQ(parse_tool_calls("<|channel|>analysis<|message|>Let me thi", h).reasoning, "Let me thi");
    // Malformed arguments: no call, never an error; a reply outside the format is content.
    EXPECT_TRUE(parse_tool_calls("<|channel|>commentary to=functions.f<|message|>{oops", h).calls.empty());
    EXPECT_EQ(parse_tool_calls("Plain text.", h).content, "Plain text.");
    // The stream holds the whole reply: the frame is never content as it stands.
    EXPECT_EQ(tool_call_start("<|channel|>final<|message|>Hi", h, false), 0u);
}

}  // namespace
}  // namespace tessera
