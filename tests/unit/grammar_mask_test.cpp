// Token masks against a brute-force reference (each token's bytes fed to a
// copy of the matcher), on a synthetic vocabulary and, with TESSERA_MODEL, on
// SmolLM2's 49k vocabulary along random walks, with the time per mask.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar_test_util.h"
#include "gguf/gguf_file.h"
#include "grammar/gbnf.h"
#include "grammar/token_mask.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

using test::compile_gbnf;

TokenMask brute_force_mask(const GrammarMatcher& m, const TokenVocabulary& vocab) {
    TokenMask mask((static_cast<size_t>(vocab.n_tokens()) + 63) / 64, 0);
    for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
        bool ok = false;
        if (vocab.bytes(id).empty()) {
            for (int32_t e : vocab.eos_ids()) ok = ok || (e == id && m.accepting());
        } else {
            GrammarMatcher copy = m;
            ok = copy.advance(std::string_view(vocab.bytes(id)));
        }
        if (ok) mask[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
    }
    return mask;
}

const char* kJsonGrammar = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
)";

// Walks `steps` random allowed tokens, checking each mask against brute force;
// returns the seconds spent in compute_token_mask.
double random_walk(const std::shared_ptr<const Grammar>& g, const TokenVocabulary& vocab, int steps, uint32_t seed,
                   bool check) {
    GrammarMatcher m(g);
    std::mt19937 rng(seed);
    TokenMask mask;
    double seconds = 0;
    for (int step = 0; step < steps; ++step) {
        const auto t0 = std::chrono::steady_clock::now();
        compute_token_mask(m, vocab, mask);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (check) {
            EXPECT_EQ(mask, brute_force_mask(m, vocab)) << "step " << step;
        }
        std::vector<int32_t> allowed;
        for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
            if (mask_has(mask, id) && !vocab.bytes(id).empty()) allowed.push_back(id);
        }
        if (allowed.empty()) break;
        const int32_t pick = allowed[rng() % allowed.size()];
        EXPECT_TRUE(m.advance(std::string_view(vocab.bytes(pick))));
    }
    return seconds;
}

TEST(GrammarMask, SyntheticVocabularyMatchesBruteForce) {
    // Every string of up to 3 bytes over a small alphabet, plus EOS (empty).
    const std::string alphabet = "{}[]\",:0123456789 -.aeflnrstu\\\n";
    std::vector<std::string> tokens{""};
    for (char a : alphabet) {
        tokens.emplace_back(1, a);
        for (char b : alphabet) {
            tokens.push_back(std::string{a, b});
            for (char c : std::string("\"{}0 e")) tokens.push_back(std::string{a, b, c});
        }
    }
    tokens.push_back("\xC3\xA9");
    tokens.push_back("\xC3");  // half a character: allowed where the string allows it
    const TokenVocabulary vocab(tokens, {0});
    auto g = compile_gbnf(kJsonGrammar);
    ASSERT_TRUE(g);
    for (uint32_t seed = 1; seed <= 5; ++seed) random_walk(g, vocab, 40, seed, true);
}

TEST(GrammarMask, EosOnlyWhereAccepting) {
    const TokenVocabulary vocab({"", "a", "ab", "b"}, {0});
    auto g = compile_gbnf("root ::= \"a\" \"b\"?\n");
    ASSERT_TRUE(g);
    GrammarMatcher m(g);
    TokenMask mask;
    compute_token_mask(m, vocab, mask);
    EXPECT_EQ(mask[0], 0b0110u);  // a, ab; no EOS before anything
    ASSERT_TRUE(m.advance(uint8_t{'a'}));
    compute_token_mask(m, vocab, mask);
    EXPECT_EQ(mask[0], 0b1001u);  // EOS or b
    EXPECT_EQ(m.n_bytes(), 1u);   // the walk left the matcher as it was
}

// Cached masks along a walk equal freshly computed ones; returns the hit count.
size_t cached_walk(const std::shared_ptr<const Grammar>& g, const TokenVocabulary& vocab, int steps, uint32_t seed) {
    GrammarMatcher m(g);
    TokenMaskCache cache;
    std::mt19937 rng(seed);
    TokenMask cached, fresh;
    for (int step = 0; step < steps; ++step) {
        cache.compute(m, vocab, cached);
        compute_token_mask(m, vocab, fresh);
        EXPECT_EQ(cached, fresh) << "step " << step;
        std::vector<int32_t> allowed;
        for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
            if (mask_has(fresh, id) && !vocab.bytes(id).empty()) allowed.push_back(id);
        }
        if (allowed.empty()) break;
        EXPECT_TRUE(m.advance(std::string_view(vocab.bytes(allowed[rng() % allowed.size()]))));
    }
    return cache.hits();
}

TEST(GrammarMask, CacheGivesTheSameMasks) {
    std::vector<std::string> tokens{""};
    for (const char* t : {"\"", "a", "b", "ab", "\\", "\\n", "\"a", "a\"", "{", "}", ":", ",", "1", "2", " "}) tokens.push_back(t);
    const TokenVocabulary vocab(tokens, {0});
    auto g = compile_gbnf(kJsonGrammar);
    ASSERT_TRUE(g);
    size_t hits = 0;
    for (uint32_t seed = 1; seed <= 20; ++seed) hits += cached_walk(g, vocab, 40, seed);
    EXPECT_GT(hits, 0u);  // states inside strings repeat
}

TEST(GrammarMask, CacheSurvivesRollbackAndCopies) {
    const TokenVocabulary vocab({"", "a", "b", "ab", "ba"}, {0});
    auto g = compile_gbnf("root ::= \"a\"* \"b\" | \"b\" \"a\"*\n");
    ASSERT_TRUE(g);
    GrammarMatcher m(g);
    TokenMaskCache cache;
    TokenMask mask;
    ASSERT_TRUE(m.advance(uint8_t{'a'}));
    cache.compute(m, vocab, mask);
    EXPECT_EQ(mask[0], 0b01110u);  // a, b, ab
    // Roll back and take the other branch: same length, different state.
    m.rollback(1);
    ASSERT_TRUE(m.advance(uint8_t{'b'}));
    cache.compute(m, vocab, mask);
    EXPECT_EQ(mask[0], 0b00011u);  // EOS or a
    // A copy that diverges is not served the original's masks.
    GrammarMatcher copy = m;
    EXPECT_NE(copy.lineage(), m.lineage());
    ASSERT_TRUE(copy.advance(uint8_t{'a'}));
    TokenMask expected;
    compute_token_mask(copy, vocab, expected);
    cache.compute(copy, vocab, mask);
    EXPECT_EQ(mask, expected);
}

TEST(GrammarMask, SmolLmVocabulary) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "TESSERA_MODEL not set";
    auto gguf = GgufFile::open(path);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();
    const TokenVocabulary vocab = TokenVocabulary::from_tokenizer(*tok);
    auto g = compile_gbnf(kJsonGrammar);
    ASSERT_TRUE(g);
    random_walk(g, vocab, 8, 7, true);
    const size_t hits = cached_walk(g, vocab, 30, 5);
    std::printf("grammar mask cache: %zu of 30 steps served from the cache\n", hits);
    const int steps = 60;
    const double s = random_walk(g, vocab, steps, 11, false);
    std::printf("grammar mask: %.1f us per token (JSON grammar, %d-token vocabulary)\n", s / steps * 1e6,
                vocab.n_tokens());
}

}  // namespace
}  // namespace tessera
