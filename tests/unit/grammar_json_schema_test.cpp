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
    expect_refused(R"({"type": "array", "prefixItems": 3})", "'prefixItems' at # must be a list");
    expect_refused(R"({"prefixItems": [{}], "items": false, "minItems": 2})", "minItems above the 1 prefixItems");
    expect_refused(R"({"type": "string", "pattern": "(a)\\1"})", "backreference");
    expect_refused(R"({"type": "object", "properties": {"x": {"allOf": []}}})",
                   "'allOf' at #/properties/x must be a non-empty list");
    expect_refused(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})", "share no type");
    expect_refused(R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})", "'pattern' differs between the parts");
    expect_refused(R"({"type": "object", "not": {}})", "unsupported JSON Schema keyword 'not'");
    expect_refused(R"({"type": "strin"})", "unknown type 'strin'");
    expect_refused(R"({"type": "integer", "minimum": 5, "exclusiveMaximum": 5})", "admit no integer");
    expect_refused(R"({"type": "integer", "maximum": 1e30})", "'maximum' at # must be a number");
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

// Every integer in a window around the bounds is accepted exactly when it
// lies in the range, for closed, half-open and fractional bounds.
TEST(GrammarJsonSchema, IntegerBoundsAcceptExactlyTheRange) {
    struct Case {
        const char* bounds;
        int64_t lo, hi;  // the integers the bounds admit (INT64_MIN / MAX: open)
    };
    constexpr int64_t kOpenLo = INT64_MIN, kOpenHi = INT64_MAX;
    const Case cases[] = {
        {R"("minimum": 5)", 5, kOpenHi},
        {R"("maximum": 10)", kOpenLo, 10},
        {R"("minimum": 0, "maximum": 255)", 0, 255},
        {R"("minimum": -40, "maximum": 125)", -40, 125},
        {R"("minimum": -1000, "maximum": -7)", -1000, -7},
        {R"("exclusiveMinimum": 99, "exclusiveMaximum": 1000)", 100, 999},
        {R"("minimum": 17, "maximum": 1203)", 17, 1203},
        {R"("minimum": 2.5, "maximum": 7.5)", 3, 7},
        {R"("exclusiveMinimum": -2.5, "exclusiveMaximum": 3)", -2, 2},
        {R"("minimum": 3, "exclusiveMinimum": 5)", 6, kOpenHi},
        {R"("maximum": -12)", kOpenLo, -12},
        {R"("minimum": 7, "maximum": 7)", 7, 7},
    };
    for (const Case& c : cases) {
        auto g = schema(std::string(R"({"type": "integer", )") + c.bounds + "}");
        ASSERT_TRUE(g) << c.bounds;
        for (int64_t v = -1500; v <= 1500; ++v) {
            ASSERT_EQ(matches(g, std::to_string(v)), v >= c.lo && v <= c.hi) << c.bounds << " at " << v;
        }
        for (int64_t v : {int64_t{123456789012}, int64_t{-98765432101}}) {
            EXPECT_EQ(matches(g, std::to_string(v)), v >= c.lo && v <= c.hi) << c.bounds << " at " << v;
        }
        EXPECT_EQ(matches(g, "-0"), c.lo < 0 && c.hi >= 0) << c.bounds;  // JSON's other 0, beside negatives
        EXPECT_FALSE(matches(g, "007")) << c.bounds;
    }
}

TEST(GrammarJsonSchema, IntegerBoundsOfNineteenDigits) {
    auto g = schema(R"({"type": "integer", "minimum": -4000000000000000000, "maximum": 4000000000000000000})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "4000000000000000000"));
    EXPECT_TRUE(matches(g, "-3999999999999999999"));
    EXPECT_FALSE(matches(g, "4000000000000000001"));
    EXPECT_FALSE(matches(g, "10000000000000000000"));
    EXPECT_FALSE(matches(g, "-4000000000000000001"));
}

TEST(GrammarJsonSchema, PrefixItemsThenItems) {
    auto g = schema(R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                        "items": {"type": "boolean"}, "minItems": 1, "maxItems": 4})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"(["a"])"));
    EXPECT_TRUE(matches(g, R"(["a",2])"));
    EXPECT_TRUE(matches(g, R"(["a",2,true,false])"));
    EXPECT_FALSE(matches(g, "[]"));                        // minItems 1
    EXPECT_FALSE(matches(g, R"([2])"));                    // position 0 is a string
    EXPECT_FALSE(matches(g, R"(["a","b"])"));              // position 1 an integer
    EXPECT_FALSE(matches(g, R"(["a",2,3])"));              // later items booleans
    EXPECT_FALSE(matches(g, R"(["a",2,true,false,true])"));  // maxItems 4
    auto closed = schema(R"({"prefixItems": [{"const": 1}, {"const": 2}], "items": false, "minItems": 2})");
    ASSERT_TRUE(closed);
    EXPECT_TRUE(matches(closed, "[1,2]"));
    EXPECT_FALSE(matches(closed, "[1]"));
    EXPECT_FALSE(matches(closed, "[1,2,3]"));
    auto open = schema(R"({"prefixItems": [{"type": "null"}]})");
    ASSERT_TRUE(open);
    EXPECT_TRUE(matches(open, "[]"));
    EXPECT_TRUE(matches(open, R"([null,"x",{}])"));
    EXPECT_FALSE(matches(open, "[1]"));
}

TEST(GrammarJsonSchema, AllOfMergesObjectsBoundsAndRefs) {
    auto g = schema(R"({"$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}},
                                           "required": ["id"]}},
                        "allOf": [{"$ref": "#/$defs/base"},
                                  {"properties": {"id": {"maximum": 99}, "name": {"type": "string"}},
                                   "required": ["name"], "additionalProperties": false}]})");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, R"({"id":7,"name":"x"})"));
    EXPECT_FALSE(matches(g, R"({"id":7})"));            // name required by the second part
    EXPECT_FALSE(matches(g, R"({"name":"x"})"));        // id required by the first
    EXPECT_FALSE(matches(g, R"({"id":100,"name":"x"})"));  // both bounds hold
    EXPECT_FALSE(matches(g, R"({"id":-1,"name":"x"})"));
    EXPECT_FALSE(matches(g, R"({"id":7,"name":"x","z":1})"));
    auto n = schema(R"({"allOf": [{"type": ["number", "string"]}, {"type": "integer", "minimum": 3}, {"maximum": 5}]})");
    ASSERT_TRUE(n);
    EXPECT_TRUE(matches(n, "4"));
    EXPECT_FALSE(matches(n, "6"));
    EXPECT_FALSE(matches(n, "4.5"));
    EXPECT_FALSE(matches(n, "\"s\""));
    auto t = schema(R"({"$defs": {"any": true}, "allOf": [{"$ref": "#/$defs/any"}, {"type": "boolean"}]})");
    ASSERT_TRUE(t);  // a part that is a $ref to `true` adds nothing
    EXPECT_TRUE(matches(t, "false"));
    EXPECT_FALSE(matches(t, "1"));
    expect_refused(R"({"$defs": {"no": false}, "allOf": [{"$ref": "#/$defs/no"}]})", "matches nothing");
}

}  // namespace
}  // namespace tessera
