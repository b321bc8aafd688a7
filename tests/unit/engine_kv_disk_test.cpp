// The KV disk tier through the engine on the real default model: a prefix
// the RAM cache evicted comes back from disk with bitwise the same logits as
// a RAM hit, and a restarted engine answers from the tier without
// recomputing the prefix.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "engine/engine.h"
#include "engine_stream_collector.h"
#include "loaded_model_suite.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

struct Answer {
    std::string text;
    int64_t cached = 0;
    std::vector<float> logprobs;  // of each sampled token
};

class EngineKvDiskTest : public test::LoadedModelSuite {
protected:
    void SetUp() override {
        LoadedModelSuite::SetUp();
        if (IsSkipped()) return;
        dir_ = fs::temp_directory_path() / ("tessera_engine_kv_disk_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // 20 blocks of 16 tokens: room for one ~200-token prompt and a bit.
    std::unique_ptr<Engine> start() {
        auto e = Engine::start(*model_, *tokenizer_,
                               EngineOptions{.threads = 2, .ctx_size = 320, .kv_disk_dir = dir_.string(),
                                             .kv_disk_bytes = uint64_t{64} << 20});
        EXPECT_TRUE(e.ok()) << e.error();
        return e.ok() ? std::move(*e) : nullptr;
    }
    std::vector<int32_t> prompt(const std::string& topic) const {
        std::string text;
        for (int k = 0; k < 20; ++k) text += "Note " + std::to_string(k) + " about " + topic + ": it matters. ";
        return tokenizer_->encode(text, {.add_special = true, .parse_special = true});
    }
    static Answer run(Engine& e, const std::vector<int32_t>& tokens) {
        GenerationRequest r;
        r.prompt = tokens;
        r.sampling.temperature = 0.0f;
        r.max_tokens = 6;
        r.top_logprobs = 0;
        auto h = e.submit(r);
        EXPECT_TRUE(h.ok()) << h.error();
        Answer out;
        if (!h.ok()) return out;
        while (!(*h)->finished()) {
            auto ev = (*h)->next(std::chrono::seconds(120));
            if (!ev) break;
            out.text += ev->text;
            for (const TokenLogprob& lp : ev->logprobs) out.logprobs.push_back(lp.logprob);
            if (ev->finish != FinishReason::None) out.cached = ev->cached_tokens;
        }
        return out;
    }

    fs::path dir_;
};

TEST_F(EngineKvDiskTest, AnEvictedPrefixComesBackFromDisk) {
    auto e = start();
    ASSERT_TRUE(e);
    const auto a = prompt("apples"), b = prompt("bridges");
    ASSERT_GT(a.size(), 160u);
    ASSERT_LT(a.size(), 260u);
    const int64_t full_blocks = static_cast<int64_t>(a.size() - 1) / 16 * 16;
    const Answer cold = run(*e, a);
    const Answer ram_hit = run(*e, a);
    EXPECT_EQ(ram_hit.cached, full_blocks);
    EXPECT_EQ(e->metrics().kv_disk_loaded.load(), 0u);
    run(*e, b);  // needs the blocks a's prefix holds: they spill to disk
    EXPECT_GT(e->metrics().kv_disk_stored.load(), 0u);
    const Answer disk_hit = run(*e, a);
    EXPECT_EQ(disk_hit.cached, full_blocks);
    EXPECT_GT(e->metrics().kv_disk_loaded.load(), 0u);
    EXPECT_EQ(disk_hit.text, cold.text);
    EXPECT_EQ(disk_hit.text, ram_hit.text);
    EXPECT_EQ(disk_hit.logprobs, ram_hit.logprobs);  // the same K/V bits, the same batch: the same logits
    EXPECT_EQ(e->metrics().kv_disk_rejected.load(), 0u);
}

TEST_F(EngineKvDiskTest, ARestartedEngineAnswersFromTheTier) {
    const auto a = prompt("apples");
    const int64_t full_blocks = static_cast<int64_t>(a.size() - 1) / 16 * 16;
    Answer before;
    {
        auto e = start();
        ASSERT_TRUE(e);
        before = run(*e, a);
        EXPECT_EQ(before.cached, 0);
    }  // shutdown writes the RAM cache out
    auto e = start();
    ASSERT_TRUE(e);
    EXPECT_GT(e->metrics().kv_disk_blocks.load(), full_blocks / 16 - 1);
    const Answer after = run(*e, a);
    EXPECT_EQ(after.cached, full_blocks);
    EXPECT_EQ(after.text, before.text);
    EXPECT_EQ(e->metrics().kv_disk_loaded.load(), static_cast<uint64_t>(full_blocks / 16));
    auto again = Engine::start(*model_, *tokenizer_,
                               EngineOptions{.threads = 2, .ctx_size = 320, .kv_disk_dir = dir_.string()});
    EXPECT_FALSE(again.ok());  // the tier is one engine's at a time
}

}  // namespace
}  // namespace tessera
