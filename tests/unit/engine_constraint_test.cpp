// Grammar-constrained generation through the real engine and default model:
// a grammar forcing a string yields exactly it and ends with "stop", JSON
// output matches its grammar for every choice of n > 1, greedy runs repeat
// exactly, and the structured-output metrics count what ran.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "engine_stream_collector.h"
#include "loaded_model_suite.h"
#include "engine/engine.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/token_mask_tables.h"

namespace tessera {
namespace {

using test::collect;
using test::Collected;

bool matches(const std::shared_ptr<const Grammar>& g, const std::string& text) {
    GrammarMatcher m(g);
    return m.advance(std::string_view(text)) && m.accepting();
}

class EngineConstraintTest : public test::LoadedModelSuite {
protected:
    void SetUp() override {
        LoadedModelSuite::SetUp();
        if (IsSkipped()) return;
        auto e = Engine::start(*model_, *tokenizer_, EngineOptions{.threads = 2});
        ASSERT_TRUE(e.ok()) << e.error();
        engine_ = std::move(*e);
    }

    GenerationRequest request(const std::string& prompt, std::shared_ptr<const Grammar> g, int32_t max_tokens) {
        GenerationRequest r;
        r.prompt = tokenizer_->encode(prompt, {.add_special = true, .parse_special = true});
        r.sampling.temperature = 0.0f;
        r.max_tokens = max_tokens;
        r.constraint.grammar = std::move(g);
        return r;
    }

    Collected run(const GenerationRequest& r) {
        auto h = engine_->submit(r);
        EXPECT_TRUE(h.ok()) << h.error();
        return h.ok() ? collect(**h) : Collected{};
    }

    static std::shared_ptr<const Grammar> gbnf(const std::string& text) {
        auto g = parse_gbnf(text);
        EXPECT_TRUE(g.ok()) << g.error();
        return g.ok() ? std::make_shared<const Grammar>(std::move(*g)) : nullptr;
    }

    std::unique_ptr<Engine> engine_;
};


TEST_F(EngineConstraintTest, ForcedStringIsTheWholeOutput) {
    // Far from what the model would write after this prompt.
    const std::string forced = "Zebra 42 {quux} -- done.";
    Collected c = run(request("The capital of France is", gbnf("root ::= \"" + forced + "\""), 64));
    EXPECT_EQ(c.text[0], forced);
    EXPECT_EQ(c.last[0].finish, FinishReason::Stop) << "the grammar was complete: the choice must stop";
    EXPECT_LT(c.last[0].completion_tokens, 64);
}

TEST_F(EngineConstraintTest, EndOfGenerationOnlyWhereTheGrammarAccepts) {
    // The instruct model wants to end its answer early (<|im_end|>); the
    // grammar demands at least three lines of digits first.
    const std::string prompt =
        "<|im_start|>user\nSay yes.<|im_end|>\n<|im_start|>assistant\n";
    auto g = gbnf("root ::= line line line+\nline ::= [0-9]+ \"\\n\"");
    Collected c = run(request(prompt, g, 48));
    const std::string& out = c.text[0];
    if (c.last[0].finish == FinishReason::Stop) {
        EXPECT_TRUE(matches(g, out)) << "stopped before the grammar accepted: '" << out << "'";
    } else {
        EXPECT_EQ(c.last[0].finish, FinishReason::Length);
        GrammarMatcher m(g);
        EXPECT_TRUE(m.advance(std::string_view(out))) << out;
    }
}

TEST_F(EngineConstraintTest, JsonSchemaForEveryChoiceAndGreedyRepeats) {
    auto schema = compile_json_schema(
        R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0},)"
        R"("tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":3}},"required":["name","age","tags"]})");
    ASSERT_TRUE(schema.ok()) << schema.error();
    auto g = std::make_shared<const Grammar>(std::move(*schema));
    GenerationRequest r = request("A person as JSON:", g, 96);
    r.n = 2;
    Collected first = run(r);
    Collected second = run(r);
    for (int32_t i = 0; i < 2; ++i) {
        EXPECT_EQ(first.last[i].finish, FinishReason::Stop) << first.text[i];
        EXPECT_TRUE(matches(g, first.text[i])) << first.text[i];
        EXPECT_EQ(first.text[i], second.text[i]) << "greedy constrained decoding must repeat";
    }
    EXPECT_EQ(first.text[0], first.text[1]) << "greedy choices of one prompt agree";

    r.n = 3;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 11;
    Collected sampled = run(r);
    for (int32_t i = 0; i < 3; ++i) {
        if (sampled.last[i].finish == FinishReason::Stop) {
            EXPECT_TRUE(matches(g, sampled.text[i])) << sampled.text[i];
        } else {
            EXPECT_EQ(sampled.last[i].finish, FinishReason::Length) << sampled.last[i].error;
        }
    }
    const EngineMetrics& m = engine_->metrics();
    EXPECT_EQ(m.constrained_requests.load(), 3u);
    EXPECT_GE(m.grammar_mask.count(), 3u);
    EXPECT_EQ(m.grammar_compile.count(), 3u);
}

TEST_F(EngineConstraintTest, JumpForwardKeepsGreedyOutputAndCountsForcedTokens) {
    // Fixed keys: the grammar forces most of the output's bytes.
    auto g = gbnf(R"(root ::= "{\"name_of_the_city\":\"" [A-Za-z ]+ "\",\"population_in_millions\":" [0-9]+ "}")");
    const std::string prompt = "<|im_start|>user\nDescribe Paris as JSON.<|im_end|>\n<|im_start|>assistant\n";
    Collected jumped = run(request(prompt, g, 48));
    const uint64_t forced = engine_->metrics().jump_forward_tokens.load();
    EXPECT_GT(forced, 5u) << "the fixed keys were not drafted";
    EXPECT_LE(forced, engine_->metrics().jump_forward_drafted_tokens.load());

    EngineOptions off{.threads = 2};
    off.spec.max_forced = 0;
    auto plain_engine = Engine::start(*model_, *tokenizer_, off);
    ASSERT_TRUE(plain_engine.ok()) << plain_engine.error();
    auto h = (*plain_engine)->submit(request(prompt, g, 48));
    ASSERT_TRUE(h.ok()) << h.error();
    Collected plain = collect(**h);
    EXPECT_EQ(jumped.text[0], plain.text[0]) << "jump-forward must not change greedy output";
    EXPECT_EQ(jumped.last[0].completion_tokens, plain.last[0].completion_tokens);
    EXPECT_EQ((*plain_engine)->metrics().jump_forward_drafted_tokens.load(), 0u);
}

// Masks computed on the mask thread during the forward pass give the same
// outputs as masks computed as each row is sampled: greedy and seeded
// sampled choices, several requests batched, jump-forward drafts on.
TEST_F(EngineConstraintTest, MaskThreadGivesTheSameOutputs) {
    auto schema = compile_json_schema(
        R"({"type":"object","properties":{"city":{"type":"string","maxLength":16},"rank":{"type":"integer"}},)"
        R"("required":["city","rank"]})");
    ASSERT_TRUE(schema.ok()) << schema.error();
    auto g = std::make_shared<const Grammar>(std::move(*schema));
    const std::string prompt = "<|im_start|>user\nDescribe Paris as JSON.<|im_end|>\n<|im_start|>assistant\n";
    std::vector<std::string> texts[2];
    for (const auto mode : {EngineOptions::MaskThread::Off, EngineOptions::MaskThread::On}) {
        EngineOptions o{.threads = 1};
        o.mask_thread = mode;
        auto engine = Engine::start(*model_, *tokenizer_, o);
        ASSERT_TRUE(engine.ok()) << engine.error();
        std::vector<std::shared_ptr<RequestHandle>> handles;
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            GenerationRequest r = request(prompt, g, 40);
            r.n = 2;
            r.sampling.temperature = seed == 1 ? 0.0f : 0.9f;
            r.sampling.seed = seed;
            auto h = (*engine)->submit(r);
            ASSERT_TRUE(h.ok()) << h.error();
            handles.push_back(*h);
        }
        auto& out = texts[mode == EngineOptions::MaskThread::On];
        for (auto& h : handles) {
            Collected c = collect(*h);
            for (int32_t i = 0; i < 2; ++i) out.push_back(c.text[i]);
        }
        EXPECT_GT((*engine)->metrics().grammar_mask.count(), 20u);
    }
    EXPECT_EQ(texts[0], texts[1]);
    EXPECT_TRUE(matches(g, texts[1][0])) << texts[1][0];
}

TEST_F(EngineConstraintTest, PrebuiltSharedTablesGiveTheLazyOutput) {
    auto g = gbnf(R"(root ::= "{\"city\":\"" [A-Za-z ]{1,20} "\",\"rank\":" [0-9]{1,3} "}")");
    const std::string prompt = "<|im_start|>user\nDescribe Paris as JSON.<|im_end|>\n<|im_start|>assistant\n";
    Collected lazy = run(request(prompt, g, 40));
    auto tables = std::make_shared<TokenMaskTables>(g, *engine_->grammar_vocabulary());
    EXPECT_TRUE(tables->build_all());
    GenerationRequest r = request(prompt, g, 40);
    r.constraint.tables = tables;
    r.n = 2;  // both choices share the tables
    Collected shared = run(r);
    EXPECT_EQ(shared.text[0], lazy.text[0]);
    EXPECT_EQ(shared.text[1], lazy.text[0]);
    EXPECT_TRUE(matches(g, shared.text[0])) << shared.text[0];
}

TEST_F(EngineConstraintTest, TablesOfAnotherVocabularyOrGrammarAreRefused) {
    auto g = gbnf(R"(root ::= "yes" | "no")");
    GenerationRequest r = request("Answer:", g, 4);
    auto other_vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::from_tokenizer(*tokenizer_));
    r.constraint.tables = std::make_shared<TokenMaskTables>(g, *other_vocab);
    auto refused = engine_->submit(r);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().kind(), ErrorKind::InvalidArgument);
    r.constraint.tables = std::make_shared<TokenMaskTables>(gbnf(R"(root ::= "maybe")"), *engine_->grammar_vocabulary());
    EXPECT_FALSE(engine_->submit(r).ok());
}

TEST_F(EngineConstraintTest, UnconstrainedRequestsComputeNoMask) {
    GenerationRequest r = request("Hello", nullptr, 4);
    Collected c = run(r);
    EXPECT_EQ(c.last[0].completion_tokens, 4);
    EXPECT_EQ(engine_->metrics().grammar_mask.count(), 0u);
    EXPECT_EQ(engine_->metrics().constrained_requests.load(), 0u);
}

}  // namespace
}  // namespace tessera
