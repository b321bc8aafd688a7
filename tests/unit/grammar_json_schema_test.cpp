// JSON Schema -> grammar: instances that must match and must not, recursion
// through $ref, and refusals that name the keyword or the limit.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar/json_schema.h"
#include "grammar/matcher.h"

namespace tessera {
namespace {

std::shared_ptr<const Grammar> schema(const std::string& text) {
    auto g = compile_json_schema(text);
    EXPECT_TRUE(g.ok()) << g.error();
    if (!g.ok()) return nullptr;
    return std::make_shared<const Grammar>(std::move(*g));
}

bool matches(const std::shared_ptr<const Grammar>& g, const std::string& s) {
    GrammarMatcher m(g);
    return m.advance(s) && m.accepting();
}

TEST(GrammarJsonSchema, ObjectWithRequiredAndOptionalProperties) {
    auto g = schema(R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name"]})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"({"name":"Ann"})"));
    EXPECT_TRUE(matches(g, R"({"name":"Ann","age":-3,"tags":["a","b"]})"));
    EXPECT_TRUE(matches(g, R"({"name":"Ann","tags":[]})"));
    EXPECT_FALSE(matches(g, R"({"age":3})"));                  // name is required
    EXPECT_FALSE(matches(g, R"({"name":"Ann","other":1})"));    // no additional properties
    EXPECT_FALSE(matches(g, R"({"name":"Ann",})"));
    EXPECT_FALSE(matches(g, R"({"name":"Ann","age":1.5})"));
    EXPECT_FALSE(matches(g, R"({"name":"Ann","age":01})"));
    EXPECT_FALSE(matches(g, R"({"age":3,"name":"Ann"})"));      // listed order
}

TEST(GrammarJsonSchema, AllOptionalAndAdditionalProperties) {
    auto g = schema(R"({"properties": {"a": {"type": "boolean"}, "b": {"type": "null"}},
                        "additionalProperties": {"type": "number"}})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "{}"));
    EXPECT_TRUE(matches(g, R"({"b":null})"));
    EXPECT_TRUE(matches(g, R"({"a":true,"x":1e5,"y":-0.5})"));
    EXPECT_TRUE(matches(g, R"({"z":2})"));
    EXPECT_FALSE(matches(g, R"({"z":"s"})"));
    EXPECT_FALSE(matches(g, R"({,"z":2})"));
}

TEST(GrammarJsonSchema, ScalarsEnumConstAnyOf) {
    auto e = schema(R"({"enum": ["red", "green", 3, null]})");
    ASSERT_TRUE(e);
    EXPECT_TRUE(matches(e, "\"green\""));
    EXPECT_TRUE(matches(e, "3"));
    EXPECT_TRUE(matches(e, "null"));
    EXPECT_FALSE(matches(e, "\"blue\""));
    auto c = schema(R"({"const": {"k": [1, "x\"y"]}})");
    ASSERT_TRUE(c);
    EXPECT_TRUE(matches(c, R"({"k":[1,"x\"y"]})"));
    auto a = schema(R"({"anyOf": [{"type": "string", "maxLength": 2}, {"type": ["integer", "null"]}]})");
    ASSERT_TRUE(a);
    EXPECT_TRUE(matches(a, "\"ab\""));
    EXPECT_TRUE(matches(a, "\"\\n\""));  // one escaped character
    EXPECT_FALSE(matches(a, "\"abc\""));
    EXPECT_TRUE(matches(a, "42"));
    EXPECT_TRUE(matches(a, "null"));
    EXPECT_FALSE(matches(a, "true"));
}

TEST(GrammarJsonSchema, SimpleIntegerBounds) {
    auto g = schema(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0},
                        "p": {"type": "integer", "exclusiveMinimum": 0}}, "required": ["n", "p"]})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"({"n":0,"p":1})"));
    EXPECT_TRUE(matches(g, R"({"n":120,"p":37})"));
    EXPECT_FALSE(matches(g, R"({"n":-1,"p":1})"));
    EXPECT_FALSE(matches(g, R"({"n":0,"p":0})"));
    EXPECT_FALSE(matches(g, R"({"n":01,"p":1})"));
}

TEST(GrammarJsonSchema, ArrayBoundsAndStringLengths) {
    auto g = schema(R"({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 3},
                        "minItems": 2, "maxItems": 3})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"(["a","bcd"])"));
    EXPECT_TRUE(matches(g, R"(["a","b","c"])"));
    EXPECT_FALSE(matches(g, R"(["a"])"));
    EXPECT_FALSE(matches(g, R"(["a","b","c","d"])"));
    EXPECT_FALSE(matches(g, R"(["","b"])"));
    EXPECT_FALSE(matches(g, R"(["abcd","b"])"));
}

TEST(GrammarJsonSchema, RecursiveRefs) {
    auto g = schema(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
        "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["v"]}}})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4}]}]})"));
    EXPECT_FALSE(matches(g, R"({"v":1,"kids":[{"kids":[]}]})"));
}

// A pattern is searched (an unanchored end admits any text), but a group
// inside it is matched as written: found by the schema corpus, where
// "^(/[a-z]{1,3}){1,2}$" admitted any string.
TEST(GrammarJsonSchema, PatternGroupsStayAnchored) {
    auto g = schema(R"({"type": "string", "pattern": "^(/[a-z]{1,3}){1,2}$"})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"("/ab/c")"));
    EXPECT_FALSE(matches(g, R"("x/ab")"));
    EXPECT_FALSE(matches(g, R"("/ab x/c")"));
    auto open = schema(R"({"type": "string", "pattern": "(ab|cd)[0-9]"})");
    ASSERT_TRUE(open);
    EXPECT_TRUE(matches(open, R"("xx cd7 yy")"));
    EXPECT_FALSE(matches(open, R"("xx cd yy")"));
}

TEST(GrammarJsonSchema, AnyJsonObject) {
    auto g = std::make_shared<const Grammar>(json_object_grammar());
    EXPECT_TRUE(matches(g, R"({"a":[1,{"b":null}],"c":"\u001F\n\u007f","d":"é"})"));
    // Only control characters (and DEL) are \u-escaped, as llguidance does;
    // no "\/", no lone surrogate.
    EXPECT_FALSE(matches(g, R"({"c":"\u00e9"})"));
    EXPECT_FALSE(matches(g, R"({"c":"\ud800"})"));
    EXPECT_FALSE(matches(g, R"({"c":"\/"})"));
    EXPECT_FALSE(matches(g, R"([1])"));
    EXPECT_FALSE(matches(g, R"({"a":})"));
}

void expect_refused(const std::string& text, const std::string& reason, const GrammarLimits& limits = {}) {
    auto g = compile_json_schema(text, limits);
    ASSERT_FALSE(g.ok()) << text.substr(0, 200);
    EXPECT_NE(g.error().find(reason), std::string::npos) << g.error();
}

TEST(GrammarJsonSchema, RefusalsNameTheKeywordOrLimit) {
    expect_refused(R"({"type": "array", "prefixItems": []})", "unsupported JSON Schema keyword 'prefixItems'");
    expect_refused(R"({"type": "string", "pattern": "(a)\\1"})", "backreference");
    expect_refused(R"({"type": "object", "properties": {"x": {"allOf": []}}})",
                   "unsupported JSON Schema keyword 'allOf' at #/properties/x");
    expect_refused(R"({"type": "strin"})", "unknown type 'strin'");
    expect_refused(R"({"type": "integer", "maximum": 10})", "unsupported JSON Schema keyword 'maximum'");
    expect_refused(R"({"type": "integer", "minimum": 5})", "integer minimum 5");
    expect_refused(R"({"type": "number", "minimum": 0})", "'minimum' on a number");
    expect_refused(R"({"$ref": "#/$defs/missing"})", "cannot resolve");
    expect_refused(R"({"type": "object", "required": ["a"]})", "required property 'a'");
    expect_refused(R"({"type": "array", "minItems": 3, "maxItems": 2})", "maxItems below minItems");
    expect_refused(R"({"type": "string", "maxLength": 99999999})", "must be an integer in");
    expect_refused("{\"type\": ", "not valid JSON");
    // 10,000 levels of nesting and a 1 MB schema: refused, not crashed.
    std::string deep;
    for (int i = 0; i < 10000; ++i) deep += R"({"type": "array", "items": )";
    deep += "{}" + std::string(10000, '}');
    expect_refused(deep, "nested too deeply");
    std::string big = R"({"enum": [")" + std::string(1 << 20, 'a') + R"("]})";
    expect_refused(big, "too large");
}

}  // namespace
}  // namespace tessera
