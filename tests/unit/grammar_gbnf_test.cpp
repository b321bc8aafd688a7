// GBNF parsing and byte-level matching: what each construct accepts and
// rejects, rollback, and errors that name their position and reason.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar_test_util.h"
#include "grammar/gbnf.h"
#include "grammar/matcher.h"

namespace tessera {
namespace {

using test::compile_gbnf;

// Whole-string match: every byte accepted and the end accepting.
bool matches(const std::shared_ptr<const Grammar>& g, const std::string& s) {
    GrammarMatcher m(g);
    return m.advance(s) && m.accepting();
}

// A prefix of some match: every byte accepted.
bool viable(const std::shared_ptr<const Grammar>& g, const std::string& s) {
    GrammarMatcher m(g);
    return m.advance(s);
}

TEST(GrammarGbnf, LiteralsAndAlternatives) {
    auto g = compile_gbnf("root ::= \"yes\" | \"no\" | \"maybe\"\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "yes"));
    EXPECT_TRUE(matches(g, "maybe"));
    EXPECT_FALSE(matches(g, "ye"));
    EXPECT_TRUE(viable(g, "ma"));
    EXPECT_FALSE(viable(g, "yess"));
    EXPECT_FALSE(matches(g, ""));
}

TEST(GrammarGbnf, EscapesAndUtf8) {
    auto g = compile_gbnf(R"(root ::= "a\n\t\"\\" "\x41\u00e9\U0001F600" "ü")");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "a\n\t\"\\A\xC3\xA9\xF0\x9F\x98\x80\xC3\xBC"));
    EXPECT_FALSE(matches(g, "a\n\t\"\\A\xC3\xA9\xF0\x9F\x98\x80u"));
}

TEST(GrammarGbnf, CharacterClasses) {
    auto g = compile_gbnf("root ::= [a-cx] [^\"\\\\] [0-9]\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "bq7"));
    EXPECT_TRUE(matches(g, "x\xE2\x82\xAC" "0"));  // a three-byte character in a negated class
    EXPECT_FALSE(matches(g, "d q7"));
    EXPECT_FALSE(matches(g, "a\"1"));
    EXPECT_FALSE(matches(g, "a\\1"));
    // A negated class never admits a surrogate's encoding or invalid UTF-8.
    EXPECT_FALSE(viable(g, "a\xED\xA0"));
    EXPECT_FALSE(viable(g, "a\xC0"));
    EXPECT_FALSE(viable(g, "a\xFF"));
}

TEST(GrammarGbnf, UnicodeRanges) {
    auto g = compile_gbnf("root ::= [\\u00e0-\\u00ff\\u4e00-\\u9fff]+\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "\xC3\xA0\xE4\xB8\x80\xE9\xBF\xBF"));  // à 一 U+9FFF
    EXPECT_FALSE(matches(g, "\xC3\x9F"));                          // ß (U+00DF)
    EXPECT_FALSE(matches(g, "\xEA\x80\x80"));                      // U+A000
}

TEST(GrammarGbnf, AnyCharacter) {
    auto g = compile_gbnf("root ::= . .\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "\n\xF0\x9F\x98\x80"));
    EXPECT_FALSE(matches(g, "a"));
    EXPECT_FALSE(matches(g, "abc"));
}

TEST(GrammarGbnf, Repetitions) {
    auto g = compile_gbnf("root ::= \"a\"* \"b\"+ \"c\"? \"de\"{2} [0-9]{1,3} \"x\"{2,}\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "bdede1xx"));
    EXPECT_TRUE(matches(g, "aaabbcdede123xxxx"));
    EXPECT_FALSE(matches(g, "dede1xx"));        // b+ needs one
    EXPECT_FALSE(matches(g, "bdede1234xx"));    // {1,3}
    EXPECT_FALSE(matches(g, "bde1xx"));         // {2} of a two-byte literal
    EXPECT_FALSE(matches(g, "bdede1x"));        // {2,}
    EXPECT_FALSE(matches(g, "bccdede1xx"));
}

TEST(GrammarGbnf, GroupsRulesCommentsAndLines) {
    const char* text = R"(# a list of numbers
root ::= "[" ws ( num ( "," ws num )* )? ws "]"   # trailing comment
num  ::= "-"? [1-9] [0-9]* | "0"
ws   ::= ( " " | "\n"
          | "\t" )*
)";
    auto g = compile_gbnf(text);
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "[]"));
    EXPECT_TRUE(matches(g, "[ 1,\n -20,0 ]"));
    EXPECT_FALSE(matches(g, "[01]"));
    EXPECT_FALSE(matches(g, "[1,]"));
}

TEST(GrammarGbnf, RecursionBothWays) {
    auto right = compile_gbnf("root ::= \"(\" root \")\" | \"\"\n");
    ASSERT_TRUE(right);
    EXPECT_TRUE(matches(right, "((()))"));
    EXPECT_FALSE(matches(right, "(()"));
    auto left = compile_gbnf("root ::= root \"+\" n | n\nn ::= [0-9]+\n");
    ASSERT_TRUE(left);
    EXPECT_TRUE(matches(left, "1+22+333"));
    EXPECT_FALSE(matches(left, "1++2"));
}

TEST(GrammarGbnf, NullableEverywhere) {
    auto g = compile_gbnf("root ::= a b a \"!\" \na ::= \"x\"? \nb ::= a a\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "!"));
    EXPECT_TRUE(matches(g, "xxxx!"));
    EXPECT_FALSE(matches(g, "xxxxx!"));
}

TEST(GrammarGbnf, MatcherRollbackAndCopy) {
    auto g = compile_gbnf("root ::= \"{\" [a-z]+ \"}\"\n");
    ASSERT_TRUE(g);
    GrammarMatcher m(g);
    EXPECT_TRUE(m.advance(std::string_view("{ab")));
    EXPECT_FALSE(m.advance(std::string_view("c9")));  // all or nothing
    EXPECT_EQ(m.n_bytes(), 3u);
    GrammarMatcher copy = m;
    EXPECT_TRUE(copy.advance(std::string_view("}")));
    EXPECT_TRUE(copy.accepting());
    EXPECT_TRUE(copy.finished());
    EXPECT_FALSE(m.accepting());
    m.rollback(2);
    EXPECT_TRUE(m.allowed_bytes().has('a'));
    EXPECT_FALSE(m.allowed_bytes().has('}'));
    EXPECT_TRUE(m.advance(std::string_view("z}")));
    EXPECT_TRUE(m.accepting());
}

// An error's message: parse must fail, name the position and the reason.
void expect_error(const std::string& text, const std::string& position, const std::string& reason,
                  const GrammarLimits& limits = {}) {
    auto g = parse_gbnf(text, limits);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_NE(g.error().find(position), std::string::npos) << g.error();
    EXPECT_NE(g.error().find(reason), std::string::npos) << g.error();
}

TEST(GrammarGbnf, ErrorsNamePositionAndReason) {
    expect_error("root ::= \"abc\n", "line 2, column 1", "unterminated string");
    expect_error("root ::= x\n", "", "undefined rule 'x'");
    expect_error("start ::= \"a\"\n", "", "no 'root' rule");
    expect_error("root ::= \"a\"\nroot ::= \"b\"\n", "line 2", "defined twice");
    expect_error("root ::= \"\\q\"\n", "line 1, column 11", "unknown escape");
    expect_error("root ::= [a\n", "line 2, column 1", "unterminated character class");
    expect_error("root ::= [z-a]\n", "line 1", "out of order");
    expect_error("root ::= \"a\"{3,2}\n", "line 1", "below minimum");
    expect_error("root ::= \"a\"**\n", "line 1", "repetition of a repetition");
    expect_error("root ::= (\"a\"\n", "line 2", "expected ')'");
    expect_error("root = \"a\"\n", "line 1, column 6", "expected '::='");
    expect_error("root ::= <[100]>\n", "line 1", "token references");
    expect_error("root ::= \"\\uD800\"\n", "line 1", "not a Unicode scalar value");
}

TEST(GrammarGbnf, LimitsRefuseOversizedGrammars) {
    GrammarLimits small;
    small.max_nesting = 10;
    small.max_repetition = 100;
    small.max_source_bytes = 1000;
    small.max_rules = 50;
    expect_error("root ::= " + std::string(20, '(') + "\"a\"" + std::string(20, ')') + "\n", "line 1",
                 "nested too deeply", small);
    expect_error("root ::= \"a\"{101}\n", "line 1", "too large", small);
    expect_error("root ::= \"" + std::string(2000, 'a') + "\"\n", "", "over 1000 bytes", small);
    expect_error("root ::= \"a\"{0,60}\n", "", "too many rules", small);
    GrammarLimits no_time;
    no_time.max_compile_seconds = 1e-9;  // any real compile takes longer
    expect_error("root ::= \"a\"\n", "", "limit of 1e-09 s (max_compile_seconds)", no_time);
    // Under the limits the same shapes compile.
    EXPECT_TRUE(parse_gbnf("root ::= \"a\"{100}\n", small).ok());
    EXPECT_TRUE(parse_gbnf("root ::= ((((\"a\"))))\n", small).ok());
}

}  // namespace
}  // namespace tessera
