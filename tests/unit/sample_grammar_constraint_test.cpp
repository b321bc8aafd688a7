// The grammar mask in front of the sampler, on a small synthetic vocabulary:
// a grammar forcing a fixed string yields exactly it whatever the logits
// prefer, the end token is never sampled before the grammar accepts, and
// greedy constrained decoding is deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar/gbnf.h"
#include "sample/grammar_constraint.h"
#include "sample/sampler.h"

namespace tessera {
namespace {

constexpr int32_t kEos = 0;

// Token 0 is the end token (no bytes); the rest are pieces of text.
std::shared_ptr<const TokenVocabulary> vocabulary() {
    std::vector<std::string> bytes = {"", "a", "b", "ab", "abc", "c", "{", "}", "\"", "x", " ", "{\"", "\"}"};
    return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{kEos});
}

std::shared_ptr<const Grammar> grammar(const std::string& gbnf) {
    auto g = parse_gbnf(gbnf);
    EXPECT_TRUE(g.ok()) << g.error();
    return g.ok() ? std::make_shared<const Grammar>(std::move(*g)) : nullptr;
}

struct Decoded {
    std::string text;
    bool ended_by_eos = false;  // else the grammar completed
    int steps = 0;
};

// Decodes until the end token or a complete grammar, with logits drawn by
// `logits_for` (step -> row), through the mask then the sampler.
template <class LogitsFor>
Decoded decode(const std::shared_ptr<const Grammar>& g, const std::shared_ptr<const TokenVocabulary>& vocab,
               SamplingParams params, LogitsFor logits_for, int max_steps = 64) {
    GrammarConstraint c(g, vocab);
    Sampler sampler(params, vocab->n_tokens());
    Decoded out;
    for (; out.steps < max_steps; ++out.steps) {
        const std::vector<float> logits = logits_for(out.steps);
        const std::span<const float> row = c.mask(logits);
        EXPECT_FALSE(row.empty()) << "no token allowed after '" << out.text << "'";
        if (row.empty()) break;
        const int32_t token = sampler.sample(row);
        EXPECT_TRUE(c.accept(token)) << "the sampler picked a token the mask forbids: " << token;
        sampler.accept(token);
        if (c.is_end_token(token)) {
            out.ended_by_eos = true;
            break;
        }
        out.text += vocab->bytes(token);
        if (c.complete()) break;
    }
    return out;
}

// Logits that favour the end token most, then every other token in turn.
std::vector<float> eos_first(int32_t n) {
    std::vector<float> l(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) l[static_cast<size_t>(i)] = static_cast<float>(n - i);
    return l;
}

TEST(GrammarConstraint, ForcedStringComesOutExactlyUnderGreedy) {
    auto vocab = vocabulary();
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    const Decoded d = decode(grammar("root ::= \"{\\\"abc\\\"}\""), vocab, greedy,
                             [&](int) { return eos_first(vocab->n_tokens()); });
    EXPECT_EQ(d.text, "{\"abc\"}");
    EXPECT_FALSE(d.ended_by_eos) << "nothing may follow the string: the grammar completes the choice";
}

TEST(GrammarConstraint, ForcedStringComesOutExactlyUnderRandomSampling) {
    auto vocab = vocabulary();
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        SamplingParams p;
        p.temperature = 1.5f;
        p.seed = seed;
        std::mt19937 rng(static_cast<uint32_t>(seed));
        std::normal_distribution<float> noise(0.0f, 3.0f);
        const Decoded d = decode(grammar("root ::= \"ab\" \"c\"+ \"x\""), vocab, p, [&](int) {
            std::vector<float> l(static_cast<size_t>(vocab->n_tokens()));
            for (float& v : l) v = noise(rng);
            return l;
        });
        ASSERT_GE(d.text.size(), 4u) << "seed " << seed;
        EXPECT_EQ(d.text.substr(0, 2), "ab") << "seed " << seed;
        EXPECT_EQ(d.text.back(), 'x') << "seed " << seed;
        EXPECT_EQ(d.text.find_first_not_of('c', 2), d.text.size() - 1) << d.text;
    }
}

TEST(GrammarConstraint, EndTokenOnlyWhereTheGrammarAccepts) {
    auto vocab = vocabulary();
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    // "a" then optional "b"s: the end token is the model's favourite at every
    // step, so it is taken as soon as it is allowed (after the "a"), never before.
    const Decoded d = decode(grammar("root ::= \"a\" \"b\"*"), vocab, greedy,
                             [&](int) { return eos_first(vocab->n_tokens()); });
    EXPECT_EQ(d.text, "a");
    EXPECT_TRUE(d.ended_by_eos);

    GrammarConstraint c(grammar("root ::= \"a\" \"b\"*"), vocab);
    const std::vector<float> flat(static_cast<size_t>(vocab->n_tokens()), 0.0f);
    EXPECT_TRUE(std::isinf(c.mask(flat)[kEos])) << "end token allowed before the grammar accepts";
    EXPECT_FALSE(c.accept(kEos));
    EXPECT_FALSE(c.accept(2)) << "'b' before 'a'";
    ASSERT_TRUE(c.accept(1));
    EXPECT_EQ(c.mask(flat)[kEos], 0.0f);
    EXPECT_FALSE(c.complete()) << "more 'b's may follow";
}

TEST(GrammarConstraint, GreedyIsDeterministic) {
    auto vocab = vocabulary();
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    greedy.repeat_penalty = 1.3f;  // the chain after the mask still runs
    auto g = grammar("root ::= (\"a\" | \"b\" | \"c\" | \" \")+ \"x\"");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    std::vector<std::vector<float>> rows(64, std::vector<float>(static_cast<size_t>(vocab->n_tokens())));
    for (auto& r : rows) {
        for (float& v : r) v = u(rng);
    }
    const auto by_step = [&](int step) { return rows[static_cast<size_t>(step)]; };
    const Decoded first = decode(g, vocab, greedy, by_step);
    const Decoded second = decode(g, vocab, greedy, by_step);
    EXPECT_EQ(first.text, second.text);
    EXPECT_EQ(first.steps, second.steps);
}

TEST(GrammarConstraint, NoAllowedTokenGivesAnEmptyRow) {
    auto vocab = vocabulary();
    GrammarConstraint c(grammar("root ::= \"q\""), vocab);  // no token spells "q"
    const std::vector<float> flat(static_cast<size_t>(vocab->n_tokens()), 0.0f);
    EXPECT_TRUE(c.mask(flat).empty());
}

// prepare() ahead of mask() (the engine's mask thread) gives mask()'s own
// result, and an accepted token drops the prepared set rather than letting a
// stale one through.
TEST(GrammarConstraint, PreparedMaskIsTheMaskAndAcceptDropsIt) {
    auto vocab = vocabulary();
    auto g = grammar("root ::= \"{\" [abc]+ \"}\"");
    GrammarConstraint inline_mask(g, vocab), ahead(g, vocab);
    const std::vector<float> logits = eos_first(vocab->n_tokens());
    for (const int32_t token : {6, 4, 1, 7}) {  // "{" "abc" "a" "}"
        const std::vector<float> want(inline_mask.mask(logits).begin(), inline_mask.mask(logits).end());
        ahead.prepare();
        const std::span<const float> got = ahead.mask(logits);
        ASSERT_EQ(std::vector<float>(got.begin(), got.end()), want) << "before token " << token;
        EXPECT_GE(ahead.last_mask_seconds(), 0.0);
        ASSERT_TRUE(inline_mask.accept(token));
        ASSERT_TRUE(ahead.accept(token));
    }
    // After "{abca}" only the end token is allowed: a mask prepared before the
    // last accept ("}" allowed, end not) would differ.
    const std::span<const float> end = ahead.mask(logits);
    ASSERT_FALSE(end.empty());
    for (int32_t id = 1; id < vocab->n_tokens(); ++id) EXPECT_TRUE(std::isinf(end[static_cast<size_t>(id)])) << id;
    EXPECT_FALSE(std::isinf(end[kEos]));
}

}  // namespace
}  // namespace tessera
