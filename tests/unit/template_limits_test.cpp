// Sandbox limits, error reporting and the chat API's input handling: things
// jinja2 has no exact counterpart for (tessera's caps, line numbers, JSON
// validation, the ChatML fallback), so the expected values are stated here.
#include <gtest/gtest.h>

#include <string>

#include "template/chat_render.h"
#include "template/template.h"

namespace tessera {
namespace {

Expected<std::string> render(const std::string& src, const TemplateLimits& limits = {},
                             const nlohmann::ordered_json& vars = nlohmann::ordered_json::object()) {
    auto t = Template::parse(src, limits);
    if (!t) return t.status();
    RenderOptions options;
    options.limits = limits;
    return t->render(vars, options);
}

void expect_error(const Expected<std::string>& got, const std::string& fragment) {
    ASSERT_FALSE(got.ok()) << "rendered: " << (got.ok() ? got.value() : "");
    EXPECT_NE(got.error().find(fragment), std::string::npos) << got.error();
}

TEST(TemplateLimits, InfiniteMacroRecursionHitsRecursionLimit) {
    expect_error(render("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"), "recursion limit");
}

TEST(TemplateLimits, HugeRangeIsRefused) {
    expect_error(render("{% for i in range(10**9) %}x{% endfor %}"), "range too big");
}

TEST(TemplateLimits, LoopIterationCap) {
    TemplateLimits limits;
    limits.max_loop_iterations = 1000;
    expect_error(render("{% for i in range(600) %}{% for j in range(2) %}{% endfor %}{% endfor %}", limits),
                 "loop iteration limit");
    EXPECT_TRUE(render("{% for i in range(500) %}{% for j in range(1) %}{% endfor %}{% endfor %}", limits).ok());
}

TEST(TemplateLimits, OutputCap) {
    TemplateLimits limits;
    limits.max_output_bytes = 1000;
    expect_error(render("{% for i in range(200) %}0123456789{% endfor %}", limits), "output limit");
    expect_error(render("{{ 'x' * 100000 }}", limits), "output limit");
}

TEST(TemplateLimits, StepCap) {
    TemplateLimits limits;
    limits.max_steps = 500;
    expect_error(render("{% for i in range(1000) %}{{ i }}{% endfor %}", limits), "step limit");
}

TEST(TemplateLimits, StringGrowthIsCapped) {
    TemplateLimits limits;
    limits.max_output_bytes = 1 << 16;
    const std::string src =
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}";
    expect_error(render(src, limits), "output limit");
}

TEST(TemplateLimits, DeepNestingIsASyntaxErrorNotACrash) {
    const std::string deep_parens = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
    expect_error(render(deep_parens), "nesting deeper");
    std::string long_chain = "{{ 1";
    for (int i = 0; i < 5000; ++i) long_chain += " + 1";
    expect_error(render(long_chain + " }}"), "nesting deeper");
    std::string deep_ifs;
    for (int i = 0; i < 300; ++i) deep_ifs += "{% if true %}";
    for (int i = 0; i < 300; ++i) deep_ifs += "{% endif %}";
    expect_error(render(deep_ifs), "nesting deeper");
}

TEST(TemplateLimits, DeepValuesAreRefused) {
    const std::string src =
        "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}";
    expect_error(render(src), "nested too deeply");
}

TEST(TemplateLimits, NamespaceCannotContainItself) {
    expect_error(render("{% set ns = namespace() %}{% set ns.self = [ns] %}"), "namespace cannot be stored");
}

TEST(TemplateErrors, MessagesCarryLineNumbers) {
    expect_error(render("line1\n{{ 'a' + 1 }}"), "line 2");
    expect_error(render("a\nb\n{% if x %}\n{% for %}"), "line 4");
    expect_error(render("\n\n{{ raise_exception('nope: bad role') }}"), "line 3: nope: bad role");
    expect_error(render("{{ missing.attr }}"), "'missing' is undefined");
}

TEST(TemplateErrors, UnsupportedTagsAreErrors) {
    expect_error(render("{% include 'x.jinja' %}"), "unsupported tag 'include'");
    expect_error(render("{% for x in y recursive %}{% endfor %}"), "recursive");
}

TEST(TemplateErrors, NoAccessBeyondPassedValues) {
    // Python internals reachable in an unsandboxed jinja2 are plain undefined here.
    auto got = render("[{{ ''.__class__ }}][{{ cycler }}][{{ self }}]");
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value(), "[][][]");
    expect_error(render("{{ ''.__class__.__mro__ }}"), "undefined");
}

TEST(TemplateRender, VariablesMustBeAnObject) {
    auto t = Template::parse("x");
    ASSERT_TRUE(t.ok());
    EXPECT_FALSE(t->render(nlohmann::ordered_json::array()).ok());
}

nlohmann::ordered_json json_of(const std::string& text) {
    auto j = parse_chat_json(text, "test input");
    EXPECT_TRUE(j.ok()) << j.error();
    return j.ok() ? *j : nlohmann::ordered_json();
}

TEST(ChatRender, RendersTextPartsAndGenerationPrompt) {
    const ChatTemplate chatml(chatml_template(), "", "");
    ChatRenderInput in;
    in.messages = json_of(R"([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}])");
    auto got = chatml.render(in);
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value(), "<|im_start|>user\na\nb<|im_end|>\n<|im_start|>assistant\n");
    in.add_generation_prompt = false;
    got = chatml.render(in);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got.value(), "<|im_start|>user\na\nb<|im_end|>\n");
}

TEST(ChatRender, BadInputIsAnError) {
    const ChatTemplate chatml(chatml_template(), "", "");
    const auto not_json = parse_chat_json("{not json", "messages");
    ASSERT_FALSE(not_json.ok());
    EXPECT_NE(not_json.error().find("not valid JSON"), std::string::npos) << not_json.error();
    ChatRenderInput in;
    in.messages = json_of(R"({"role":"user"})");
    expect_error(chatml.render(in), "must be a JSON array");
    in.messages = json_of(R"([{"content":"x"}])");
    expect_error(chatml.render(in), "role");
    in.messages = json_of(R"([{"role":"user","content":[{"type":"image_url","image_url":{}}]}])");
    expect_error(chatml.render(in), "content parts");
    in.messages = json_of(R"([{"role":"user","content":"x"}])");
    in.tools = json_of(R"({"a":1})");
    expect_error(chatml.render(in), "tools must be a JSON array");
    std::string deep(2000, '[');
    in.tools = json_of(deep + std::string(2000, ']'));
    expect_error(chatml.render(in), "nested deeper");
}

// Tool schemas reach the template in the order they were written (a model
// sees `tools | tojson` as the client sent it, as with transformers).
TEST(ChatRender, ToolSchemaKeysKeepTheirOrder) {
    const ChatTemplate t("{{ tools | tojson }}|{% for m in messages %}{{ m.content }}{% endfor %}", "", "");
    ChatRenderInput in;
    in.messages = json_of(R"([{"role":"user","content":"hi"}])");
    in.tools = json_of(R"([{"type":"function","function":{"name":"f","parameters":)"
                       R"({"type":"object","required":["z"],"properties":{"z":{"type":"string"},"a":{"type":"integer"}}}}}])");
    auto got = t.render(in);
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value(), R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", )"
                           R"("required": ["z"], "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}}}}]|hi)");
}

TEST(ChatRender, TemplateIsCompiledOnceAndItsErrorKept) {
    const ChatTemplate broken("{% for x in %}", "", "");
    EXPECT_FALSE(broken.compile_status().ok());
    ChatRenderInput in;
    in.messages = json_of(R"([{"role":"user","content":"x"}])");
    auto got = broken.render(in);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error(), broken.compile_status().message());
    const ChatTemplate good(chatml_template(), "<s>", "</s>");
    EXPECT_TRUE(good.compile_status().ok());
    EXPECT_EQ(good.bos_token(), "<s>");
    EXPECT_EQ(good.source(), chatml_template());
}

TEST(ChatRender, FallsBackToChatMLWithWarning) {
    const ChatTemplateChoice none = choose_chat_template("");
    EXPECT_EQ(none.source, chatml_template());
    EXPECT_FALSE(none.warning.empty());
    const ChatTemplateChoice own = choose_chat_template("{{ x }}");
    EXPECT_EQ(own.source, "{{ x }}");
    EXPECT_TRUE(own.warning.empty());
}

}  // namespace
}  // namespace tessera
