// Jump-forward's raw material (grammar/forced.h): the bytes a grammar forces
// stop at the first choice and where the output may end, the matcher is left
// as it was, and the longest-first split covers the forced bytes with tokens.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "grammar/forced.h"
#include "grammar_test_util.h"
#include "sample/grammar_constraint.h"

namespace tessera {
namespace {

using test::compile_gbnf;

std::string joined(const TokenVocabulary& vocab, const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) s += vocab.bytes(id);
    return s;
}

TEST(ForcedBytes, StopAtTheFirstChoiceAndLeaveTheMatcherAsItWas) {
    auto g = compile_gbnf(R"(root ::= "{\"name\":" ("true" | "false") "}")");
    GrammarMatcher m(g);
    EXPECT_EQ(forced_bytes(m, 100), "{\"name\":");
    EXPECT_EQ(m.n_bytes(), 0u);
    ASSERT_TRUE(m.advance(std::string_view("{\"name\":t")));
    EXPECT_EQ(forced_bytes(m, 100), "rue}");  // the choice is made: the rest follows
    EXPECT_EQ(m.n_bytes(), 9u);
    EXPECT_EQ(forced_bytes(m, 2), "ru");
}

TEST(ForcedBytes, NothingWhereTheOutputMayEnd) {
    // "ab" is a whole match and "abc" another: after "ab" the end is a choice.
    auto g = compile_gbnf(R"(root ::= "ab" "c"?)");
    GrammarMatcher m(g);
    EXPECT_EQ(forced_bytes(m, 100), "ab");
    ASSERT_TRUE(m.advance(std::string_view("ab")));
    EXPECT_EQ(forced_bytes(m, 100), "");
    ASSERT_TRUE(m.advance(std::string_view("c")));
    EXPECT_EQ(forced_bytes(m, 100), "");  // complete: nothing may follow
}

TEST(SplitLongestFirst, CoversTheBytesWithTheLongestTokens) {
    TokenVocabulary vocab({"", "{", "\"", "{\"", "name", "na", "\":", "\"", "q"}, {0});
    const auto ids = split_longest_first(vocab, "{\"name\":", 10);
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(vocab.bytes(ids[0]), "{\"");
    EXPECT_EQ(vocab.bytes(ids[1]), "name");
    EXPECT_EQ(vocab.bytes(ids[2]), "\":");
    EXPECT_EQ(split_longest_first(vocab, "{\"name\":", 2).size(), 2u);
    // A byte no token starts with ends the split there.
    EXPECT_EQ(joined(vocab, split_longest_first(vocab, "{\"z", 10)), "{\"");
}

TEST(GrammarConstraintForced, TokensFollowTheConstraintsState) {
    auto vocab = std::make_shared<const TokenVocabulary>(
        std::vector<std::string>{"", "{\"", "name", "\":", "t", "rue", "}", "f", "alse"}, std::vector<int32_t>{0});
    GrammarConstraint c(compile_gbnf(R"(root ::= "{\"name\":" ("true" | "false") "}")"), vocab);
    EXPECT_EQ(joined(*vocab, c.forced_tokens(8)), "{\"name\":");
    EXPECT_EQ(c.forced_tokens(1).size(), 1u);
    EXPECT_TRUE(c.forced_tokens(0).empty());
    for (int32_t id : c.forced_tokens(8)) ASSERT_TRUE(c.accept(id));
    EXPECT_TRUE(c.forced_tokens(8).empty());  // true or false: the model chooses
    ASSERT_TRUE(c.accept(7));                  // "f"
    EXPECT_EQ(joined(*vocab, c.forced_tokens(8)), "alse}");
}

}  // namespace
}  // namespace tessera
