// Embedding requests through the engine on the real default model: the
// vector is the pooled, normalised hidden states of one direct forward pass,
// whether the prompt runs in one step or in many chunks, batched with
// generations, or under memory pressure (a preempted one restarts its sum); no
// token is sampled and every block comes back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>

#include "loaded_model_suite.h"
#include "engine/engine.h"

namespace tessera {
namespace {

class EngineEmbeddingTest : public test::LoadedModelSuite {
protected:
    std::vector<int32_t> tokens(const std::string& text) { return tokenizer_->encode(text, {.add_special = true}); }

    // The pooled vector from one forward pass over the whole prompt, on a
    // cache of its own (call only while no engine is running a step).
    std::vector<float> direct(const std::vector<int32_t>& prompt, Pooling p) {
        KvCache cache = model_->make_kv_cache(512);
        SoloSequence seq(cache);
        ThreadPool pool(2);
        Batch b;
        b.add(seq.block_table.data(), 0, prompt, false);
        for (size_t t = 0; t < prompt.size(); ++t) {
            b.want_hidden[t] = pooling_reads(p, static_cast<int64_t>(t), static_cast<int64_t>(prompt.size()));
        }
        std::vector<float> logits, hidden;
        EXPECT_TRUE(model_->forward_batch(b, cache, logits, pool, &hidden).ok());
        const auto n_embd = static_cast<size_t>(model_->config().n_embd);
        PoolingAccumulator acc(p, model_->config().n_embd);
        for (size_t r = 0; r * n_embd < hidden.size(); ++r) acc.add(std::span<const float>(&hidden[r * n_embd], n_embd));
        return acc.finish();
    }

    static StreamEvent final_event(RequestHandle& h) {
        StreamEvent last;
        int n_events = 0;
        while (!h.finished()) {
            auto e = h.next(std::chrono::seconds(120));
            if (!e) {
                ADD_FAILURE() << "no event for 120 s";
                break;
            }
            ++n_events;
            last = std::move(*e);
        }
        EXPECT_EQ(n_events, 1) << "an embedding sends one event";
        return last;
    }

};


GenerationRequest embed_request(std::vector<int32_t> prompt) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.embed = true;
    return r;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    double max_diff = 0.0;
    for (size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, std::abs(double(got[i]) - want[i]));
    EXPECT_LT(max_diff, 1e-5) << what;
}

const char* kTexts[] = {
    "The history of the Roman Empire spans many centuries, from the founding of the city to the fall of the west.",
    "def quicksort(arr): return arr if len(arr) < 2 else quicksort([x for x in arr[1:] if x < arr[0]])",
    "Water boils at one hundred degrees Celsius at sea level.",
};

TEST_F(EngineEmbeddingTest, ChunkedBatchedAndPreemptedRunsGiveTheDirectVector) {
    for (Pooling p : {Pooling::Last, Pooling::Mean, Pooling::Cls}) {
        std::vector<std::vector<float>> want;
        for (const char* t : kTexts) want.push_back(direct(tokens(t), p));
        // 8-token steps: every prompt is prefilled in several chunks, beside
        // a generation; 6 blocks of 16 slots may preempt some of them.
        EngineOptions o{.threads = 2, .ctx_size = 96, .block_size = 16, .max_batch_tokens = 8};
        o.pooling = p;
        auto engine = Engine::start(*model_, *tokenizer_, o);
        ASSERT_TRUE(engine.ok()) << engine.error();
        GenerationRequest gen;
        gen.prompt = tokens("Once upon a time");
        gen.sampling.temperature = 0.0f;
        gen.max_tokens = 8;
        auto g = (*engine)->submit(gen);
        ASSERT_TRUE(g.ok()) << g.error();
        std::vector<std::shared_ptr<RequestHandle>> handles;
        for (const char* t : kTexts) handles.push_back(*(*engine)->submit(embed_request(tokens(t))));
        for (size_t k = 0; k < handles.size(); ++k) {
            StreamEvent e = final_event(*handles[k]);
            EXPECT_EQ(e.finish, FinishReason::Stop) << e.error;
            EXPECT_EQ(e.completion_tokens, 0);
            EXPECT_EQ(e.prompt_tokens, static_cast<int64_t>(tokens(kTexts[k]).size()));
            double norm = 0.0;
            for (float x : e.embedding) norm += double(x) * x;
            EXPECT_NEAR(norm, 1.0, 1e-5);
            expect_close(e.embedding, want[k], pooling_name(p));
        }
        while (!(*g)->finished()) (*g)->next(std::chrono::seconds(60));
        for (int k = 0; k < 100 && (*engine)->metrics().running.load() != 0; ++k) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        EXPECT_EQ((*engine)->metrics().running.load(), 0);
    }
}

TEST_F(EngineEmbeddingTest, RepeatedLastTokenEmbeddingReusesTheCacheAndKeepsTheVector) {
    auto engine = Engine::start(*model_, *tokenizer_, EngineOptions{.threads = 2});
    ASSERT_TRUE(engine.ok());
    const std::vector<int32_t> prompt = tokens(kTexts[0]);
    StreamEvent first = final_event(**(*engine)->submit(embed_request(prompt)));
    StreamEvent again = final_event(**(*engine)->submit(embed_request(prompt)));
    EXPECT_EQ(first.cached_tokens, 0);
    EXPECT_GT(again.cached_tokens, 0);
    expect_close(again.embedding, first.embedding, "cached prefix");
}

TEST_F(EngineEmbeddingTest, MeanPoolingNeverStartsFromACachedPrefix) {
    EngineOptions o{.threads = 2};
    o.pooling = Pooling::Mean;
    auto engine = Engine::start(*model_, *tokenizer_, o);
    ASSERT_TRUE(engine.ok());
    const std::vector<int32_t> prompt = tokens(kTexts[0]);
    StreamEvent first = final_event(**(*engine)->submit(embed_request(prompt)));
    StreamEvent again = final_event(**(*engine)->submit(embed_request(prompt)));
    EXPECT_EQ(again.cached_tokens, 0);
    expect_close(again.embedding, first.embedding, "mean, twice");
}

TEST_F(EngineEmbeddingTest, RefusesWhatItCannotEmbed) {
    EngineOptions none{.threads = 2};
    none.pooling = Pooling::None;
    auto engine = Engine::start(*model_, *tokenizer_, none);
    ASSERT_TRUE(engine.ok()) << "generation still works without a sentence pooling";
    EXPECT_FALSE((*engine)->embedding_pooling().ok());
    EXPECT_FALSE((*engine)->submit(embed_request(tokens("x"))).ok());
    auto ok_engine = Engine::start(*model_, *tokenizer_, EngineOptions{.threads = 2});
    ASSERT_TRUE(ok_engine.ok());
    EXPECT_EQ(*(*ok_engine)->embedding_pooling(), Pooling::Last);  // SmolLM2 has no pooling_type
    GenerationRequest two = embed_request(tokens("x"));
    two.n = 2;
    EXPECT_FALSE((*ok_engine)->submit(two).ok());
}

}  // namespace
}  // namespace tessera
