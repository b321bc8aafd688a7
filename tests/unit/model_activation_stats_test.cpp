// Activation statistics for importance matrices (model/activation_stats.h):
// on a small MoE model (attention, router, 16 experts, a shared expert),
// each layer weight gets the sums of squares of its own matmul input, per
// expert for the 3-D expert tensors, and gathering them changes no logit.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "model/activation_stats.h"
#include "model/model.h"
#include "model_moe_test_model.h"

namespace tessera {
namespace {

using namespace moe_test;

const std::vector<int32_t> kPrompt = {3, 17, 42, 8, 8, 61, 0, 25, 33, 12, 50, 7};

struct Fixture {
    std::vector<uint8_t> bytes = moe_model("qwen2moe").build();
    std::unique_ptr<Model> model;

    Fixture() {
        auto file = GgufFile::parse(bytes.data(), bytes.size());
        EXPECT_TRUE(file.ok()) << file.error();
        auto loaded = Model::from_gguf(std::move(*file));
        EXPECT_TRUE(loaded.ok()) << loaded.error();
        model = std::move(*loaded);
    }

    std::vector<float> run(ThreadPool& pool) {
        KvCache cache = model->make_kv_cache(32);
        SoloSequence seq(cache);
        std::vector<float> logits;
        EXPECT_TRUE(model->forward(cache, seq, kPrompt, true, logits, pool).ok());
        return logits;
    }
};

std::map<std::string, const ActivationStats::Entry*> by_name(const ActivationStats& stats) {
    std::map<std::string, const ActivationStats::Entry*> out;
    for (const auto& e : stats.entries()) out[e.name] = &e;
    return out;
}

const float* f32(const GgufFile& f, const char* name) {
    return reinterpret_cast<const float*>(f.find_tensor(name)->data);
}

TEST(ActivationStats, EachLayerWeightGetsItsOwnInputPerExpert) {
    Fixture fx;
    ThreadPool pool(2);
    const std::vector<float> plain = fx.run(pool);
    ActivationStats stats(fx.model->gguf());
    fx.model->set_activation_stats(&stats);
    const std::vector<float> gathered = fx.run(pool);
    fx.model->set_activation_stats(nullptr);
    EXPECT_EQ(plain, gathered) << "gathering statistics must not change the forward pass";

    const auto e = by_name(stats);
    const int64_t n = static_cast<int64_t>(kPrompt.size());
    EXPECT_EQ(e.count("token_embd.weight"), 0u);
    EXPECT_EQ(e.count("output.weight"), 0u);
    EXPECT_EQ(e.at("blk.0.attn_norm.weight")->counts, std::vector<int64_t>{0}) << "norms take no matmul input";

    // Layer 0's Q/K/V input is RMSNorm(embedding) * attn_norm, computed here.
    const GgufFile& f = fx.model->gguf();
    const float* embd = f32(f, "token_embd.weight");
    const float* norm = f32(f, "blk.0.attn_norm.weight");
    std::vector<double> want(kEmbd, 0.0);
    for (int32_t tok : kPrompt) {
        const float* x = embd + static_cast<int64_t>(tok) * kEmbd;
        double ss = 0;
        for (int c = 0; c < kEmbd; ++c) ss += static_cast<double>(x[c]) * x[c];
        const double inv = 1.0 / std::sqrt(ss / kEmbd + 1e-6);
        for (int c = 0; c < kEmbd; ++c) want[c] += std::pow(x[c] * inv * norm[c], 2);
    }
    const auto* q = e.at("blk.0.attn_q.weight");
    ASSERT_EQ(q->counts, std::vector<int64_t>{n});
    for (int c = 0; c < kEmbd; ++c) EXPECT_NEAR(q->sum2[c], want[c], 1e-4 * want[c] + 1e-6) << "column " << c;
    EXPECT_EQ(e.at("blk.0.attn_k.weight")->sum2, q->sum2);
    EXPECT_EQ(e.at("blk.0.attn_v.weight")->sum2, q->sum2);
    EXPECT_NE(e.at("blk.1.attn_q.weight")->sum2, q->sum2) << "layer 1 sees layer 0's output";

    for (int l = 0; l < kLayers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        EXPECT_EQ(e.at(p + "attn_output.weight")->counts, std::vector<int64_t>{n});
        EXPECT_EQ(e.at(p + "ffn_gate_inp.weight")->counts, std::vector<int64_t>{n});
        EXPECT_EQ(e.at(p + "ffn_gate_inp_shexp.weight")->counts, std::vector<int64_t>{n});
        EXPECT_EQ(e.at(p + "ffn_down_shexp.weight")->counts, std::vector<int64_t>{n});
        // Experts: each token counts for the k experts it was routed to.
        const auto* gate = e.at(p + "ffn_gate_exps.weight");
        ASSERT_EQ(gate->n_mat, kExperts);
        int64_t routed = 0, used = 0;
        for (int64_t c : gate->counts) routed += c, used += c > 0;
        EXPECT_EQ(routed, n * kUsed);
        EXPECT_GT(used, kUsed) << "tokens spread over more experts than one token uses";
        EXPECT_EQ(e.at(p + "ffn_up_exps.weight")->sum2, gate->sum2) << "gate and up share their input";
        const auto* down = e.at(p + "ffn_down_exps.weight");
        EXPECT_EQ(down->counts, gate->counts);
        EXPECT_EQ(down->cols, kFfExp);
        for (int64_t x = 0; x < kExperts; ++x) {
            double total = 0;
            for (int64_t c = 0; c < kEmbd; ++c) total += gate->sum2[x * kEmbd + c];
            EXPECT_EQ(total > 0, gate->counts[x] > 0) << "expert " << x << "'s sums are its own";
        }
    }
}

}  // namespace
}  // namespace tessera
