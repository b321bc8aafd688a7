// The sliding-window layers' own KV pool (EngineOptions::swa_full off), on
// the small random gpt-oss model (layer 0 sees 4 positions, layer 1 all):
// sequences far longer than the window pool holds run to the end, batched,
// forked, preempted and served from the prefix cache, and every token equals
// what the same engine gives with the whole context kept (--swa-full).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model_moe_test_model.h"
#include "tokenizer/vocab.h"

namespace tessera {
namespace {

using namespace moe_test;

// One token per model id, none special: generation never ends early.
Tokenizer plain_tokenizer() {
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.tokens = {"a", "b", "ab"};
    for (int i = 3; i < kVocab; ++i) s.tokens.push_back("t" + std::to_string(i));
    s.merges = {"a b"};
    auto vocab = Vocab::create(std::move(s));
    EXPECT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    EXPECT_TRUE(tok.ok()) << tok.error();
    return std::move(*tok);
}

std::vector<int32_t> prompt(int seed, int n) {
    std::vector<int32_t> p;
    for (int i = 0; i < n; ++i) p.push_back((7 + 13 * seed + 5 * i + i * i) % kVocab);
    return p;
}

struct Outcome {
    std::map<int32_t, std::vector<int32_t>> tokens;  // per choice
    int64_t cached = 0;
    bool error = false;
};

Outcome collect_tokens(RequestHandle& h) {
    Outcome o;
    while (!h.finished()) {
        auto e = h.next(std::chrono::seconds(120));
        if (!e) {
            ADD_FAILURE() << "no event for 120 s";
            break;
        }
        auto& t = o.tokens[e->index];
        t.insert(t.end(), e->tokens.begin(), e->tokens.end());
        if (e->finish == FinishReason::Error) o.error = true;
        if (e->finish != FinishReason::None) o.cached = std::max(o.cached, e->cached_tokens);
    }
    return o;
}

class EngineWindowPool : public ::testing::Test {
protected:
    EngineWindowPool() : bytes_(moe_model("gpt-oss").build()), tokenizer_(plain_tokenizer()) {
        auto file = GgufFile::parse(bytes_.data(), bytes_.size());
        EXPECT_TRUE(file.ok()) << file.error();
        auto model = Model::from_gguf(std::move(*file));
        EXPECT_TRUE(model.ok()) << model.error();
        model_ = std::move(*model);
    }

    static EngineOptions options(bool swa_full, int64_t ctx_size = 2048) {
        EngineOptions o;
        o.threads = 2;
        o.block_size = 4;
        o.ctx_size = ctx_size;
        o.max_batch_tokens = 16;
        o.max_seqs = 3;
        o.swa_full = swa_full;
        return o;
    }

    // Two waves: six requests at once (one with two sampled choices), then
    // two that repeat a finished prompt's start (prefix-cache hits).
    std::vector<Outcome> serve(Engine& engine) {
        std::vector<GenerationRequest> wave1, wave2;
        for (int s = 0; s < 6; ++s) {
            GenerationRequest r;
            r.prompt = prompt(s % 4, 20 + 9 * s);  // 0 and 4 share their first 20 tokens
            r.max_tokens = 90;
            r.sampling.temperature = s == 2 ? 1.0f : 0.0f;
            r.sampling.seed = 11;
            r.n = s == 2 ? 2 : 1;
            wave1.push_back(std::move(r));
        }
        for (int s : {1, 3}) {
            GenerationRequest r;
            r.prompt = prompt(s, 60);
            r.max_tokens = 40;
            r.sampling.temperature = 0.0f;
            wave2.push_back(std::move(r));
        }
        std::vector<Outcome> out;
        for (auto* wave : {&wave1, &wave2}) {
            std::vector<std::shared_ptr<RequestHandle>> handles;
            for (GenerationRequest& r : *wave) {
                auto h = engine.submit(r);
                EXPECT_TRUE(h.ok()) << h.error();
                if (h.ok()) handles.push_back(*h);
            }
            for (auto& h : handles) out.push_back(collect_tokens(*h));
        }
        return out;
    }

    std::vector<uint8_t> bytes_;  // the file the model's tensors point into
    std::unique_ptr<Model> model_;
    Tokenizer tokenizer_;
};

TEST_F(EngineWindowPool, LongSequencesMatchTheWholeContextCacheToken_for_token) {
    auto full = Engine::start(*model_, tokenizer_, options(true));
    ASSERT_TRUE(full.ok()) << full.error();
    EXPECT_EQ((*full)->metrics().kv_window_blocks_total.load(), 0);
    const std::vector<Outcome> expected = serve(**full);
    full->reset();

    auto windowed = Engine::start(*model_, tokenizer_, options(false));
    ASSERT_TRUE(windowed.ok()) << windowed.error();
    // 3 sequences' windows (1 run) and 3 partial runs, and a step's 16 tokens (4 runs).
    EXPECT_EQ((*windowed)->metrics().kv_window_blocks_total.load(), 16);
    const std::vector<Outcome> got = serve(**windowed);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_FALSE(got[i].error) << "request " << i;
        // 65 to 155 positions each: without freeing, 17 to 39 runs of the 16.
        EXPECT_EQ(got[i].tokens, expected[i].tokens) << "request " << i;
    }
    EXPECT_EQ(got[2].tokens.size(), 2u);

    // A main pool of 80 blocks cannot hold three 155-position sequences:
    // preempted sequences give their window runs back and recompute them.
    auto tight = Engine::start(*model_, tokenizer_, options(false, 320));
    ASSERT_TRUE(tight.ok()) << tight.error();
    const std::vector<Outcome> preempted = serve(**tight);
    EXPECT_GT((*tight)->metrics().preemptions.load(), 0u);
    for (size_t i = 0; i < preempted.size(); ++i) {
        EXPECT_FALSE(preempted[i].error) << "request " << i;
        EXPECT_EQ(preempted[i].tokens, expected[i].tokens) << "request " << i;
    }
}

// One sequence at a time, so the cache's state is known: a 60-token prompt
// leaves 15 runs in the cache, of which the window pool (16 blocks, up to 6
// taken by each 16-token prefill step) keeps the last ones; a longer prompt with
// the same start then reads all 60 from the cache, since a query at 60 sees
// only run 14 in the windowed layer.
TEST_F(EngineWindowPool, APromptsStartIsReusedWhenItsLastWindowIsStillHeld) {
    auto engine = Engine::start(*model_, tokenizer_, options(false));
    ASSERT_TRUE(engine.ok()) << engine.error();
    auto ask = [&](std::vector<int32_t> p) {
        GenerationRequest r;
        r.prompt = std::move(p);
        r.max_tokens = 8;
        r.sampling.temperature = 0.0f;
        auto h = (*engine)->submit(std::move(r));
        EXPECT_TRUE(h.ok()) << h.error();
        return h.ok() ? collect_tokens(**h) : Outcome{};
    };
    const Outcome first = ask(prompt(3, 60));
    EXPECT_EQ(first.cached, 0);
    std::vector<int32_t> longer = prompt(3, 60);
    longer.insert(longer.end(), {1, 2, 3, 4, 5, 6, 7});
    const Outcome second = ask(longer);
    EXPECT_FALSE(second.error);
    EXPECT_EQ(second.cached, 60);
    // Only the cache holds window blocks now: at most the whole pool, and the
    // runs of the finished sequences' windows at least.
    const int64_t used = (*engine)->metrics().kv_window_blocks_used.load();
    EXPECT_GT(used, 0);
    EXPECT_LE(used, 16);
}

// A --kv-memory budget buys the bytes the window pool saves back as main
// blocks: 2 layers of 4 F16 slots of kv_dim 32 are 512 bytes a block each.
TEST_F(EngineWindowPool, AMemoryBudgetSpendsTheSavedBytesOnMainBlocks) {
    auto budgeted = [](bool swa_full) {
        EngineOptions o = options(swa_full);
        o.kv_memory_bytes = 1 << 20;
        return o;
    };
    auto full = Engine::start(*model_, tokenizer_, budgeted(true));
    ASSERT_TRUE(full.ok()) << full.error();
    EXPECT_EQ((*full)->metrics().kv_blocks_total.load(), 1024);  // 1 MiB / (2 x 512)
    full->reset();
    auto windowed = Engine::start(*model_, tokenizer_, budgeted(false));
    ASSERT_TRUE(windowed.ok()) << windowed.error();
    EXPECT_EQ((*windowed)->metrics().kv_window_blocks_total.load(), 16);
    EXPECT_EQ((*windowed)->metrics().kv_blocks_total.load(), ((1 << 20) - 16 * 512) / 512);  // 2032
}

}  // namespace
}  // namespace tessera
