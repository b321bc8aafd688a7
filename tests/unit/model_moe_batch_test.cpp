// Expert-grouped MoE execution (model/moe_ffn.h) on a whole model: in a
// 32-sequence decode step (and a batched prefill) each used expert's
// weights are read exactly once, a single decode token reads only its k
// experts, and every sequence's logits are bit-identical to running it alone;
// decode steps give a prefill's logits (gpt-oss: past its window).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "model/model.h"
#include "model_moe_test_model.h"

namespace tessera {
namespace {

using namespace moe_test;

constexpr int kSeqs = 32, kBlocksPerSeq = 2;  // 16-position blocks: 32 positions per sequence

struct Loaded {
    std::vector<uint8_t> bytes;  // the file the model's tensors point into
    std::unique_ptr<Model> model;
};

Loaded load(const std::string& arch) {
    Loaded l;
    l.bytes = moe_model(arch).build();
    auto file = GgufFile::parse(l.bytes.data(), l.bytes.size());
    EXPECT_TRUE(file.ok()) << file.error();
    auto model = Model::from_gguf(std::move(*file));
    EXPECT_TRUE(model.ok()) << model.error();
    l.model = std::move(*model);
    return l;
}

std::vector<int32_t> prompt_of(int s) {
    std::vector<int32_t> p;
    for (int i = 0; i < 3 + s % 7; ++i) p.push_back((5 + 11 * s + 7 * i) % kVocab);
    return p;
}

int32_t next_token(int s) { return (3 * s + 1) % kVocab; }

class MoeBatch : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeBatch, ThirtyTwoSequenceStepReadsEachExpertOnceAndMatchesSingleRuns) {
    Loaded l = load(GetParam());
    Model& model = *l.model;
    ThreadPool pool(2);
    MoeCounters& counters = *model.moe_counters();
    const size_t n_vocab = kVocab;

    // Alone: each sequence's prompt, then its decode token.
    std::vector<std::vector<float>> single_prefill(kSeqs), single_decode(kSeqs);
    {
        KvCache cache = model.make_kv_cache(kSeqs * kBlocksPerSeq * 16);
        for (int s = 0; s < kSeqs; ++s) {
            SoloSequence seq(cache, s * kBlocksPerSeq, kBlocksPerSeq);
            ASSERT_TRUE(model.forward(cache, seq, prompt_of(s), true, single_prefill[s], pool).ok());
            const int32_t one[] = {next_token(s)};
            counters.reset();
            ASSERT_TRUE(model.forward(cache, seq, one, false, single_decode[s], pool).ok());
            for (int layer = 0; layer < kLayers; ++layer) {  // a decode token reads only its k experts
                uint64_t passes = 0, tokens = 0;
                for (int e = 0; e < kExperts; ++e) {
                    passes += counters.weight_passes(layer, e);
                    tokens += counters.tokens(layer, e);
                }
                EXPECT_EQ(passes, static_cast<uint64_t>(kUsed));
                EXPECT_EQ(tokens, static_cast<uint64_t>(kUsed));
            }
        }
    }

    // Together: every prompt in one prefill batch, then one 32-token decode step.
    KvCache cache = model.make_kv_cache(kSeqs * kBlocksPerSeq * 16);
    std::vector<SoloSequence> seqs;
    std::vector<std::vector<int32_t>> prompts;
    for (int s = 0; s < kSeqs; ++s) {
        seqs.emplace_back(cache, s * kBlocksPerSeq, kBlocksPerSeq);
        prompts.push_back(prompt_of(s));
    }
    Batch batch;
    for (int s = 0; s < kSeqs; ++s) batch.add(seqs[s].block_table.data(), 0, prompts[s], true, true);
    std::vector<float> logits;
    counters.reset();
    ASSERT_TRUE(model.forward_batch(batch, cache, logits, pool).ok());
    size_t row = 0;
    for (int s = 0; s < kSeqs; ++s) {
        ASSERT_EQ(single_prefill[s].size(), prompts[s].size() * n_vocab);
        EXPECT_EQ(std::memcmp(logits.data() + row * n_vocab, single_prefill[s].data(),
                              single_prefill[s].size() * sizeof(float)), 0) << "prefill of sequence " << s;
        row += prompts[s].size();
        seqs[s].n_tokens = static_cast<int64_t>(prompts[s].size());
    }
    for (int layer = 0; layer < kLayers; ++layer) {
        for (int e = 0; e < kExperts; ++e) EXPECT_LE(counters.weight_passes(layer, e), 1u) << layer << "/" << e;
    }

    std::vector<std::vector<int32_t>> tokens(kSeqs);
    batch.clear();
    for (int s = 0; s < kSeqs; ++s) {
        tokens[s] = {next_token(s)};
        batch.add(seqs[s].block_table.data(), seqs[s].n_tokens, tokens[s], true);
    }
    counters.reset();
    ASSERT_TRUE(model.forward_batch(batch, cache, logits, pool).ok());
    for (int s = 0; s < kSeqs; ++s) {
        EXPECT_EQ(std::memcmp(logits.data() + s * n_vocab, single_decode[s].data(), n_vocab * sizeof(float)), 0)
            << "decode of sequence " << s;
    }
    for (int layer = 0; layer < kLayers; ++layer) {
        uint64_t tokens_routed = 0, most = 0;
        for (int e = 0; e < kExperts; ++e) {
            const uint64_t t = counters.tokens(layer, e);
            EXPECT_EQ(counters.weight_passes(layer, e), t > 0 ? 1u : 0u) << "layer " << layer << " expert " << e;
            tokens_routed += t;
            most = std::max(most, t);
        }
        EXPECT_EQ(tokens_routed, static_cast<uint64_t>(kSeqs * kUsed));
        EXPECT_GE(most, 2u);  // some expert served several sequences with its one read
    }
}

// A prompt run token by token (each decode step attends through the cache,
// past the window on layer 0, with the sinks) gives the logits of the same
// prompt run in one prefill, to float rounding.
TEST_P(MoeBatch, DecodeStepsMatchOnePrefill) {
    Loaded l = load(GetParam());
    Model& model = *l.model;
    ThreadPool pool(2);
    const std::vector<int32_t> prompt = {3, 17, 42, 8, 8, 61, 5, 30, 12, 44, 9, 27};
    KvCache cache = model.make_kv_cache(2 * kBlocksPerSeq * 16);
    SoloSequence whole(cache, 0, kBlocksPerSeq), steps(cache, kBlocksPerSeq, kBlocksPerSeq);
    std::vector<float> all, one;
    ASSERT_TRUE(model.forward(cache, whole, prompt, true, all, pool).ok());
    float scale = 0;
    for (float x : all) scale = std::max(scale, std::fabs(x));
    for (size_t t = 0; t < prompt.size(); ++t) {
        const int32_t tok[] = {prompt[t]};
        ASSERT_TRUE(model.forward(cache, steps, tok, false, one, pool).ok());
        for (int v = 0; v < kVocab; ++v) {
            ASSERT_NEAR(one[v], all[t * kVocab + v], 1e-5f * scale) << "position " << t << " token " << v;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Archs, MoeBatch, ::testing::Values("qwen3moe", "qwen2moe", "gpt-oss"));

TEST(MoeCounters, SumOverLayersAndReset) {
    MoeCounters c(3, 4);
    c.record_pass(0, 1, 5);
    c.record_pass(2, 1, 2);
    c.record_pass(2, 3, 1);
    EXPECT_EQ(c.expert_tokens(1), 7u);
    EXPECT_EQ(c.weight_passes(2, 1), 1u);
    EXPECT_EQ(c.expert_tokens(0), 0u);
    c.reset();
    EXPECT_EQ(c.expert_tokens(1), 0u);
    EXPECT_EQ(c.weight_passes(2, 3), 0u);
}

}  // namespace
}  // namespace tessera
