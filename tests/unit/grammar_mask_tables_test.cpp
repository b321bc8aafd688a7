// TokenMaskTables (the context-independent split) against the plain
// vocabulary walk, compute_token_mask, which grammar_mask_test checks against
// brute force: equal masks at every step of random walks, on a synthetic
// vocabulary over grammars chosen for the split's edge cases (left and
// indirect recursion, nullable tails, rules ending inside a token) and, with
// TESSERA_MODEL, on SmolLM2's vocabulary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar_test_util.h"
#include "gguf/gguf_file.h"
#include "grammar/gbnf.h"
#include "grammar/token_mask.h"
#include "grammar/token_mask_tables.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

using test::compile_gbnf;

const char* kGrammars[] = {
    // JSON, as in the golden corpus.
    R"g(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
)g",
    // Direct left recursion, including in the root.
    R"g(root ::= root "," item | item
item ::= item "+" atom | atom
atom ::= [0-9]+ | "(" item ")"
)g",
    // Indirect recursion and nullable rules around short literals.
    R"g(root ::= a "." | b
a ::= b "a" | "a"
b ::= a "b" | "b" | c
c ::= "" | "c" c
)g",
    // Alternatives ending inside tokens at many depths.
    R"g(root ::= ("ab" | "a" | "abc" | "b")* "!" ("x" | "xy")?
)g",
    R"g(root ::= "(" inner ")"
inner ::= ( "x" | "(" inner ")" | " " )*
)g",
};

// Steps a random walk, comparing the tables' mask with the plain walk's.
void compare_walk(const std::shared_ptr<const Grammar>& g, const TokenVocabulary& vocab, TokenMaskTables& tables,
                  int steps, uint32_t seed, const std::string& label) {
    GrammarMatcher m(g);
    std::mt19937 rng(seed);
    TokenMask want, got;
    for (int step = 0; step < steps; ++step) {
        compute_token_mask(m, vocab, want);
        tables.compute(m, got);
        ASSERT_EQ(got, want) << label << " step " << step;
        std::vector<int32_t> allowed;
        for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
            if (mask_has(want, id) && !vocab.bytes(id).empty()) allowed.push_back(id);
        }
        if (allowed.empty()) break;
        ASSERT_TRUE(m.advance(std::string_view(vocab.bytes(allowed[rng() % allowed.size()]))));
    }
}

TokenVocabulary synthetic_vocabulary() {
    // Every string of up to 3 bytes over a small alphabet, some longer ones,
    // and EOS (no bytes).
    const std::string alphabet = "{}[]\",:019 -.aeflnrstu\\\nabcxy!+()";
    std::vector<std::string> tokens{""};
    for (char a : alphabet) {
        tokens.emplace_back(1, a);
        for (char b : alphabet) {
            tokens.push_back(std::string{a, b});
            for (char c : std::string("\"a1 ,}b)")) tokens.push_back(std::string{a, b, c});
        }
    }
    for (const char* t : {"\"name\":", "true,", "abcabc", "(((", ")))!", "12+34", "aaaa.", "ccccb", "abab!xy", "(abab",
                          "\\nab\\t", "ab ab)!", "\xC3\xA9\xC3\xA9" "a"}) {
        tokens.emplace_back(t);
    }
    return TokenVocabulary(std::move(tokens), {0});
}

TEST(GrammarMaskTables, SyntheticVocabularyMatchesPlainWalk) {
    const TokenVocabulary vocab = synthetic_vocabulary();
    for (size_t gi = 0; gi < std::size(kGrammars); ++gi) {
        const auto g = compile_gbnf(kGrammars[gi]);
        ASSERT_NE(g, nullptr);
        TokenMaskTables tables(g, vocab);
        for (uint32_t seed = 0; seed < 6; ++seed) {
            compare_walk(g, vocab, tables, 40, seed, "grammar " + std::to_string(gi) + " seed " + std::to_string(seed));
        }
        EXPECT_GT(tables.n_built(), 0u);
    }
}

TEST(GrammarMaskTables, BuildAllGivesTheSameMasks) {
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto g = compile_gbnf(kGrammars[1]);
    ASSERT_NE(g, nullptr);
    TokenMaskTables tables(g, vocab);
    tables.build_all();
    const size_t built = tables.n_built();
    EXPECT_GT(built, 0u);
    for (uint32_t seed = 0; seed < 4; ++seed) compare_walk(g, vocab, tables, 30, seed, "seed " + std::to_string(seed));
    EXPECT_EQ(tables.n_built(), built);  // every kernel position was prebuilt
}

TEST(GrammarMaskTables, LongRepetitionsShareTables) {
    // Positions deep in a bounded repetition (head and tail) share a table
    // once the rest outlasts every token (3 to 7 bytes here).
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto g = compile_gbnf("root ::= [a-c]{0,60} \"!\" | \"x\" [0-9a]{50} [b ]{2,40} \"y\"\n");
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->shorter().empty());
    TokenMaskTables tables(g, vocab);
    tables.build_all();
    EXPECT_GT(tables.n_built(), 140u);
    EXPECT_LT(tables.n_tables(), 60u);
    for (uint32_t seed = 0; seed < 8; ++seed) {
        compare_walk(g, vocab, tables, 60, seed, "seed " + std::to_string(seed));
    }
    TokenMaskTables lazy(g, vocab);
    for (uint32_t seed = 0; seed < 8; ++seed) {
        compare_walk(g, vocab, lazy, 60, seed + 100, "lazy seed " + std::to_string(seed));
    }
}


TEST(GrammarMaskTables, TablesNearARepetitionsEndAreDerived) {
    // Near its end a repetition's places differ only for long tokens, which
    // are walked again; elements of one to three bytes ("ab", an escape,
    // "é") make a token's length and its element count differ.
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto g = compile_gbnf("root ::= \"(\" (\"a\" | \"ab\" | \"\\\\\" [nt] | \"\xC3\xA9\" | \" \"){3,9} \")\" \"!\"?\n");
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->shorter().empty());
    TokenMaskTables tables(g, vocab);
    tables.build_all();
    for (uint32_t seed = 0; seed < 12; ++seed) {
        compare_walk(g, vocab, tables, 20, seed, "seed " + std::to_string(seed));
    }
    TokenMaskTables lazy(g, vocab);
    for (uint32_t seed = 0; seed < 12; ++seed) {
        compare_walk(g, vocab, lazy, 20, seed + 100, "lazy seed " + std::to_string(seed));
    }
}
TEST(GrammarMaskTables, EqualBoundedRepetitionsShareOneRule) {
    // The same bounded repetition in two contexts (different bytes after
    // it) is one rule, so one chain of tables; masks stay exact, though its
    // FOLLOW set now holds both contexts' bytes.
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto one = compile_gbnf("root ::= \"(\" [a-c ]{0,12} \")\"\n");
    const auto two = compile_gbnf("root ::= \"(\" [a-c ]{0,12} \")\" | \"[\" [a-c ]{0,12} \"]!\" [a-c ]{0,11}\n");
    ASSERT_NE(one, nullptr);
    ASSERT_NE(two, nullptr);
    EXPECT_EQ(two->n_rules(), one->n_rules() + 12);  // only {0,11}: its rule and 11 tails
    TokenMaskTables tables(two, vocab);
    for (uint32_t seed = 0; seed < 12; ++seed) {
        compare_walk(two, vocab, tables, 20, seed, "seed " + std::to_string(seed));
    }
}

TEST(GrammarMaskTables, PositionMatcherEndsWithItsAlternative) {
    // From the position after "a" in `root ::= "a" "b" x`, context unknown:
    // "b" then x, and the alternative ends after each of x's repetitions.
    const auto g = compile_gbnf("root ::= \"a\" \"b\" x\nx ::= \"c\"*\n");
    ASSERT_NE(g, nullptr);
    const uint32_t pos = g->alternatives(g->root())[0].begin + 1;
    GrammarMatcher m(g, pos);
    EXPECT_FALSE(m.accepting());
    EXPECT_FALSE(m.advance(static_cast<uint8_t>('a')));
    ASSERT_TRUE(m.advance(static_cast<uint8_t>('b')));
    EXPECT_TRUE(m.accepting());
    ASSERT_TRUE(m.advance(std::string_view("cc")));
    EXPECT_TRUE(m.accepting());
    std::vector<uint32_t> kernel;
    m.kernel_positions(kernel);
    EXPECT_FALSE(kernel.empty());
}

TEST(GrammarMaskTables, FollowSets) {
    // a is followed by "x", by b's first byte, or (b nullable) by what
    // follows root: nothing; c by d's and then by itself through the loop.
    const auto g = compile_gbnf("root ::= a \"x\" | a b | \"[\" c \"]\"\n"
                           "a ::= \"p\"\nb ::= \"q\" | \"\"\nc ::= d | c \",\" d\nd ::= [0-9]\n");
    ASSERT_NE(g, nullptr);
    const auto bytes_of = [](const ByteSet& s) {
        std::string out;
        for (int b = 0; b < 256; ++b) {
            if (s.has(static_cast<uint8_t>(b))) out.push_back(static_cast<char>(b));
        }
        return out;
    };
    const auto rule = [&](const std::string& name) {
        for (uint32_t r = 0; r < g->n_rules(); ++r) {
            if (g->rule_name(r) == name) return r;
        }
        ADD_FAILURE() << "no rule " << name;
        return uint32_t{0};
    };
    EXPECT_EQ(bytes_of(g->follow(rule("a"))), "qx");
    EXPECT_EQ(bytes_of(g->follow(rule("b"))), "");
    EXPECT_EQ(bytes_of(g->follow(rule("c"))), ",]");
    EXPECT_EQ(bytes_of(g->follow(rule("d"))), ",]");
    EXPECT_EQ(bytes_of(g->follow(rule("root"))), "");
}

TEST(GrammarMaskTables, CacheOverTablesMatchesPlainWalk) {
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto g = compile_gbnf(kGrammars[0]);
    ASSERT_NE(g, nullptr);
    TokenMaskTables tables(g, vocab);
    TokenMaskCache cache(4);
    GrammarMatcher m(g);
    TokenMask want, got;
    for (const char* piece : {"{", "\"", "ab", "c", "\":", "[", "1", ",", "\"", "x", "\"", "]", "}"}) {
        compute_token_mask(m, vocab, want);
        cache.compute(m, tables, got);
        ASSERT_EQ(got, want) << "before " << piece;
        ASSERT_TRUE(m.advance(std::string_view(piece)));
    }
}

TEST(GrammarMaskTables, VocabularySharesTablesPerGrammar) {
    const TokenVocabulary vocab = synthetic_vocabulary();
    const auto g = compile_gbnf(kGrammars[0]);
    const auto other = compile_gbnf(kGrammars[1]);
    ASSERT_TRUE(g && other);
    const auto tables = vocab.shared_tables(g);
    EXPECT_EQ(vocab.shared_tables(g), tables);
    EXPECT_NE(vocab.shared_tables(other), tables);
    // Two sequences of the grammar: the second builds nothing new.
    GrammarMatcher a(g), b(g);
    TokenMaskCache cache_a, cache_b;
    TokenMask mask_a, mask_b;
    cache_a.compute(a, vocab, mask_a);
    const size_t built = tables->n_built();
    EXPECT_GT(built, 0u);
    cache_b.compute(b, vocab, mask_b);
    EXPECT_EQ(tables->n_built(), built);
    EXPECT_EQ(mask_a, mask_b);
    // A copied cache (a forked sequence) keeps working on the same tables.
    TokenMaskCache forked = cache_b;
    GrammarMatcher c = b;
    ASSERT_TRUE(c.advance(std::string_view("{\"a\":")));
    compute_token_mask(c, vocab, mask_a);
    forked.compute(c, vocab, mask_b);
    EXPECT_EQ(mask_b, mask_a);
    // A copy of the vocabulary gets tables that point at it.
    const TokenVocabulary copy = vocab;
    const auto copied = copy.shared_tables(g);
    EXPECT_NE(copied, tables);
    EXPECT_EQ(&copied->vocab(), &copy);
}

TEST(GrammarMaskTables, SmolLmVocabularyMatchesPlainWalk) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "TESSERA_MODEL not set";
    auto gguf = GgufFile::open(path);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();
    const TokenVocabulary vocab = TokenVocabulary::from_tokenizer(*tok);
    for (size_t gi : {size_t{0}, size_t{1}, size_t{4}}) {
        const auto g = compile_gbnf(kGrammars[gi]);
        ASSERT_NE(g, nullptr);
        TokenMaskTables tables(g, vocab);
        compare_walk(g, vocab, tables, 25, 7, "grammar " + std::to_string(gi));
    }
}

}  // namespace
}  // namespace tessera
