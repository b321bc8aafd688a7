// The structured-output fields of a request body: each kind compiles to a
// grammar that matches what it should, "text" and absent fields constrain
// nothing, and every malformed, conflicting or oversized field is a 400
// naming that field.
#include <gtest/gtest.h>

#include <string>

#include "grammar/matcher.h"
#include "server/constraint_request.h"

namespace tessera {
namespace {

Json body(const char* text) {
    auto j = parse_json(text);
    EXPECT_TRUE(j.has_value()) << text;
    return j.value_or(Json::object());
}

bool matches(const GenerationConstraint& c, const std::string& text) {
    GrammarMatcher m(c.grammar);
    return m.advance(std::string_view(text)) && m.accepting();
}

GenerationConstraint compiled(const char* text, const ProtocolLimits& limits = {}) {
    GenerationConstraint c;
    auto err = read_constraint(body(text), limits, nullptr, c);
    EXPECT_FALSE(err.has_value()) << text << ": " << (err ? err->message : "");
    EXPECT_TRUE(static_cast<bool>(c)) << text;
    return c;
}

ApiError refused(const char* text, const ProtocolLimits& limits = {}) {
    GenerationConstraint c;
    auto err = read_constraint(body(text), limits, nullptr, c);
    EXPECT_TRUE(err.has_value()) << text;
    EXPECT_FALSE(static_cast<bool>(c)) << text;
    return err.value_or(ApiError{});
}

TEST(ConstraintRequest, NoFieldOrTextConstrainsNothing) {
    for (const char* text : {R"({"temperature":0})", R"({"response_format":{"type":"text"}})",
                             R"({"grammar":"","guided_json":null})"}) {
        GenerationConstraint c;
        EXPECT_FALSE(read_constraint(body(text), ProtocolLimits{}, nullptr, c).has_value()) << text;
        EXPECT_FALSE(static_cast<bool>(c)) << text;
    }
}

TEST(ConstraintRequest, EveryKindCompilesToWhatItNames) {
    const GenerationConstraint obj = compiled(R"({"response_format":{"type":"json_object"}})");
    EXPECT_TRUE(matches(obj, R"({"a":[1,true,null]})"));
    EXPECT_FALSE(matches(obj, "[1]"));

    const char* schema = R"({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]})";
    for (std::string text : {std::string(R"({"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":)") + schema + "}}}",
                             std::string(R"({"response_format":{"type":"json_object","schema":)") + schema + "}}",
                             std::string(R"({"guided_json":)") + schema + "}",
                             std::string(R"({"json_schema":)") + schema + "}",
                             std::string(R"({"guided_json":)") + Json(std::string(schema)).dump() + "}"}) {
        const GenerationConstraint c = compiled(text.c_str());
        EXPECT_TRUE(matches(c, R"({"n":-12})")) << text;
        EXPECT_FALSE(matches(c, R"({"n":"x"})")) << text;
        EXPECT_GE(c.compile_seconds, 0.0);
    }

    const GenerationConstraint choice = compiled(R"({"guided_choice":["yes","no","a \"quoted\" one"]})");
    EXPECT_TRUE(matches(choice, "no"));
    EXPECT_TRUE(matches(choice, "a \"quoted\" one"));
    EXPECT_FALSE(matches(choice, "yesno"));

    for (const char* key : {"grammar", "guided_grammar"}) {
        const std::string text = std::string(R"({")") + key + R"(":"root ::= [0-9]+ \"!\""})";
        const GenerationConstraint g = compiled(text.c_str());
        EXPECT_TRUE(matches(g, "42!")) << key;
        EXPECT_FALSE(matches(g, "42")) << key;
    }
}

TEST(ConstraintRequest, BadFieldsNameThemselves) {
    struct Case {
        const char* body;
        const char* param;
        const char* says;
    };
    const Case cases[] = {
        {R"({"response_format":"json"})", "response_format", "object"},
        {R"({"response_format":{"type":"yaml"}})", "response_format.type", "yaml"},
        {R"({"response_format":{"type":"json_schema"}})", "response_format.json_schema", "schema"},
        {R"({"response_format":{"type":"json_schema","json_schema":{"name":"x"}}})", "response_format.json_schema.schema", "required"},
        {R"({"response_format":{"type":"json_schema","json_schema":{"strict":"yes","schema":{}}}})", "response_format.json_schema", "strict"},
        {R"({"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"string","format":"hostname"}}}})",
         "response_format.json_schema.schema", "hostname"},
        {R"({"guided_json":[1]})", "guided_json", "JSON Schema"},
        {R"({"guided_json":"{\"type\":"})", "guided_json", "Invalid JSON Schema"},
        {R"({"grammar":"root ::= \"a\"\nx ::= (\"b\""})", "grammar", "line 2"},
        {R"({"guided_grammar":5})", "guided_grammar", "string"},
        {R"({"guided_choice":"yes"})", "guided_choice", "list"},
        {R"({"guided_choice":[]})", "guided_choice", "list"},
        {R"({"guided_regex":"(a)\\1"})", "guided_regex", "backreference"},
        {R"({"guided_regex":5})", "guided_regex", "string"},
        {R"({"guided_choice":["a"],"guided_json":{"type":"string"}})", "guided_choice", "At most one"},
        {R"({"response_format":{"type":"json_object"},"grammar":"root ::= \"a\""})", "grammar", "At most one"},
    };
    for (const Case& c : cases) {
        const ApiError e = refused(c.body);
        EXPECT_EQ(e.http_status, 400) << c.body;
        EXPECT_EQ(e.type, "invalid_request_error") << c.body;
        EXPECT_EQ(e.param, c.param) << c.body;
        EXPECT_NE(e.message.find(c.says), std::string::npos) << c.body << " -> " << e.message;
    }
}

TEST(ConstraintRequest, LimitsComeFromProtocolLimits) {
    ProtocolLimits small;
    small.grammar.max_source_bytes = 40;
    EXPECT_NE(refused(R"({"grammar":"root ::= \"a fairly long literal of more than forty bytes\""})", small)
                  .message.find("too large"), std::string::npos);
    EXPECT_NE(refused(R"({"guided_choice":["twenty-one bytes ...", "and twenty more bytes"]})", small)
                  .message.find("bytes"), std::string::npos);
    compiled(R"({"grammar":"root ::= \"short\""})", small);
    small.max_json_depth = 4;
    EXPECT_EQ(refused(R"({"guided_json":"{\"items\":{\"items\":{\"items\":{\"items\":{}}}}}"})", small).param,
              "guided_json");
}

TEST(ConstraintRequest, CompileTimeOverTheLimitIsRefusedNamingIt) {
    ProtocolLimits fast;
    fast.grammar.max_compile_seconds = 1e-9;  // any real compile takes longer
    const ApiError err = refused(R"({"guided_json":{"type":"object","properties":{"a":{"type":"string"}}}})", fast);
    EXPECT_EQ(err.param, "guided_json");
    EXPECT_NE(err.message.find("max_compile_seconds"), std::string::npos) << err.message;
    compiled(R"({"guided_json":{"type":"object","properties":{"a":{"type":"string"}}}})");  // default limit
}

TEST(ConstraintRequest, ACacheSharesOneCompileAndItsTables) {
    std::vector<std::string> tokens{""};
    for (const char* t : {"{", "}", "\"", "a", ":", "1", "true"}) tokens.emplace_back(t);
    GrammarCache cache(std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<int32_t>{0}),
                       size_t{1} << 20);
    const char* schema = R"({"guided_json":{"type":"object","properties":{"a":{"type":"integer"}}}})";
    GenerationConstraint first, second, other;
    ASSERT_FALSE(read_constraint(body(schema), ProtocolLimits{}, &cache, first).has_value());
    ASSERT_FALSE(read_constraint(body(schema), ProtocolLimits{}, &cache, second).has_value());
    ASSERT_FALSE(read_constraint(body(R"({"guided_regex":"a+"})"), ProtocolLimits{}, &cache, other).has_value());
    EXPECT_EQ(first.grammar, second.grammar);
    ASSERT_NE(first.tables, nullptr);
    EXPECT_EQ(first.tables, second.tables);
    EXPECT_EQ(first.tables->grammar(), first.grammar);
    EXPECT_NE(other.grammar, first.grammar);
    EXPECT_EQ(cache.hits(), 1u);
    EXPECT_EQ(cache.misses(), 2u);
    EXPECT_TRUE(matches(first, R"({"a":11})"));
    // A failed compile through the cache is the same 400.
    GenerationConstraint bad;
    auto err = read_constraint(body(R"({"guided_regex":"(a"})"), ProtocolLimits{}, &cache, bad);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->param, "guided_regex");
    EXPECT_FALSE(static_cast<bool>(bad));
}

}  // namespace
}  // namespace tessera
