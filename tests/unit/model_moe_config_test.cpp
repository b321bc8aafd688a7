// ModelConfig and ModelWeights for mixture-of-experts files: the expert keys
// each architecture reads and its defaults (renormalisation, expert widths,
// mixtral as llama with experts), and the files refused with a message that
// names the problem (bad counts, missing or mis-shaped expert tensors).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/model.h"
#include "model/model_config.h"
#include "model_moe_test_model.h"

namespace tessera {
namespace {

using namespace moe_test;

struct Parsed {
    std::vector<uint8_t> bytes;
    Expected<GgufFile> file = Status::error("unset");
};

Parsed parse(const GgufWriter& w) {
    Parsed p;
    p.bytes = w.build();
    p.file = GgufFile::parse(p.bytes.data(), p.bytes.size());
    EXPECT_TRUE(p.file.ok()) << p.file.error();
    return p;
}

TEST(ModelMoeConfig, Qwen3MoeRenormalisesAndHasQkNorm) {
    Parsed p = parse(moe_model("qwen3moe"));
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Qwen3Moe);
    EXPECT_TRUE(c->is_moe());
    EXPECT_EQ(c->n_expert, kExperts);
    EXPECT_EQ(c->n_expert_used, kUsed);
    EXPECT_EQ(c->n_ff_exp, kFfExp);
    EXPECT_EQ(c->n_ff_shexp, 0);
    EXPECT_TRUE(c->expert_weights_norm);
    EXPECT_EQ(c->expert_gating, ExpertGating::Softmax);
    EXPECT_TRUE(c->qk_norm);
    EXPECT_EQ(c->rope.style, RopeStyle::Neox);
    EXPECT_NE(c->describe().find("experts: 16 (4 used, ffn 32, softmax, renormalised)"), std::string::npos)
        << c->describe();
}

TEST(ModelMoeConfig, GemmaScalesEmbeddingsBySqrtOfTheWidth) {
    Parsed p = parse(moe_model("gemma2"));
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_FLOAT_EQ(c->embedding_scale, 8.0f);  // sqrt(64)
    EXPECT_FALSE(c->is_moe());
}

TEST(ModelMoeConfig, Qwen2MoeHasASharedExpertAndNoRenormalisation) {
    Parsed p = parse(moe_model("qwen2moe"));
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Qwen2Moe);
    EXPECT_EQ(c->n_ff_shexp, kFfShexp);
    EXPECT_FALSE(c->expert_weights_norm);
    EXPECT_TRUE(c->qkv_bias);
}

TEST(ModelMoeConfig, OlmoeNormsWholeProjections) {
    Parsed p = parse(moe_model("olmoe"));
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Olmoe);
    EXPECT_TRUE(c->qk_norm_full);
    EXPECT_FALSE(c->qk_norm);
    EXPECT_FALSE(c->expert_weights_norm);
}

TEST(ModelMoeConfig, LlamaWithExpertsIsMixtral) {
    GgufWriter w = moe_model("llama");
    Parsed p = parse(w);
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Llama);
    EXPECT_TRUE(c->is_moe());
    EXPECT_TRUE(c->expert_weights_norm);
    EXPECT_EQ(c->rope.style, RopeStyle::Normal);
}

TEST(ModelMoeConfig, GraniteMoeReadsItsMultipliers) {
    GgufWriter w = moe_model("granitemoe");
    w.add_float32("granitemoe.embedding_scale", 12.0f);
    w.add_float32("granitemoe.residual_scale", 0.22f);
    w.add_float32("granitemoe.logit_scale", 6.0f);
    w.add_float32("granitemoe.attention.scale", 0.0078125f);
    Parsed p = parse(w);
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::GraniteMoe);
    EXPECT_TRUE(c->expert_weights_norm);
    EXPECT_EQ(c->rope.style, RopeStyle::Normal);
    EXPECT_FLOAT_EQ(c->embedding_scale, 12.0f);
    EXPECT_FLOAT_EQ(c->residual_scale, 0.22f);
    EXPECT_FLOAT_EQ(c->logit_scale, 6.0f);
    EXPECT_FLOAT_EQ(c->attn_scale, 0.0078125f);
    // Without the keys: no multipliers, the usual query scale.
    Parsed plain = parse(moe_model("granite"));
    auto d = ModelConfig::from_gguf(*plain.file);
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_EQ(d->kind, ArchKind::Granite);
    EXPECT_FALSE(d->is_moe());  // dense granite: expert keys are not its
    EXPECT_FLOAT_EQ(d->embedding_scale, 1.0f);
    EXPECT_FLOAT_EQ(d->logit_scale, 1.0f);
    EXPECT_FLOAT_EQ(d->attn_scale, 0.25f);  // 1/sqrt(head_dim 16)
    GgufWriter bad = moe_model("granite");
    bad.add_float32("granite.logit_scale", 0.0f);
    Parsed b = parse(bad);
    auto e = ModelConfig::from_gguf(*b.file);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().find("logit_scale"), std::string::npos) << e.error();
}

TEST(ModelMoeConfig, FileKeysOverrideTheDefaults) {
    GgufWriter w = moe_model("qwen3moe");
    w.add_bool("qwen3moe.expert_weights_norm", false);
    w.add_uint32("qwen3moe.expert_gating_func", 2);
    Parsed p = parse(w);
    auto c = ModelConfig::from_gguf(*p.file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_FALSE(c->expert_weights_norm);
    EXPECT_EQ(c->expert_gating, ExpertGating::Sigmoid);
}

TEST(ModelMoeConfig, BadExpertCountsAreRefused) {
    {
        GgufWriter w = moe_model("qwen3moe");
        w.add_uint32("qwen3moe.expert_gating_func", 7);
        Parsed p = parse(w);
        auto c = ModelConfig::from_gguf(*p.file);
        ASSERT_FALSE(c.ok());
        EXPECT_NE(c.error().find("expert_gating_func"), std::string::npos) << c.error();
    }
    // More used than there are, more experts than the loader allows, none used.
    for (auto [count, used] : {std::pair{4u, 5u}, std::pair{4096u, 2u}, std::pair{8u, 0u}}) {
        GgufWriter w;
        w.add_string("general.architecture", "olmoe");
        w.add_uint32("olmoe.embedding_length", kEmbd);
        w.add_uint32("olmoe.block_count", 1);
        w.add_uint32("olmoe.feed_forward_length", 32);
        w.add_uint32("olmoe.attention.head_count", kHeads);
        w.add_uint32("olmoe.expert_count", count);
        w.add_uint32("olmoe.expert_used_count", used);
        w.add_tensor("token_embd.weight", GgmlType::F32, {kEmbd, kVocab},
                     std::vector<uint8_t>(kEmbd * kVocab * 4));
        Parsed p = parse(w);
        auto c = ModelConfig::from_gguf(*p.file);
        ASSERT_FALSE(c.ok()) << count << " " << used;
        EXPECT_NE(c.error().find("expert"), std::string::npos) << c.error();
    }
}

TEST(ModelMoeWeights, MissingOrMisShapedExpertTensorsAreNamed) {
    const struct {
        const char* arch;
        Damage damage;
        const char* named;
    } cases[] = {
        {"qwen3moe", {"blk.1.ffn_down_exps.weight", ""}, "'blk.1.ffn_down_exps.weight' is missing"},
        {"qwen3moe", {"", "blk.0.ffn_up_exps.weight"}, "'blk.0.ffn_up_exps.weight' has shape [64, 32, 15]"},
        {"qwen3moe", {"blk.0.ffn_gate_inp.weight", ""}, "'blk.0.ffn_gate_inp.weight' is missing"},
        {"qwen2moe", {"blk.1.ffn_gate_inp_shexp.weight", ""}, "'blk.1.ffn_gate_inp_shexp.weight' is missing"},
        {"qwen2moe", {"blk.0.ffn_up_shexp.weight", ""}, "'blk.0.ffn_up_shexp.weight' is missing"},
        {"gpt-oss", {"blk.1.attn_sinks.weight", ""}, "'blk.1.attn_sinks.weight' is missing"},
        {"gpt-oss", {"blk.0.attn_output.bias", ""}, "'blk.0.attn_output.bias' is missing"},
        {"gpt-oss", {"blk.0.ffn_gate_inp.bias", ""}, "'blk.0.ffn_gate_inp.bias' is missing"},
        {"gpt-oss", {"", "blk.1.ffn_down_exps.bias"}, "'blk.1.ffn_down_exps.bias' should have shape [64, 16]"},
        {"gpt-oss", {"blk.0.post_attention_norm.weight", ""}, "'blk.0.post_attention_norm.weight' is missing"},
    };
    for (const auto& tc : cases) {
        Parsed p = parse(moe_model(tc.arch, 1, tc.damage));
        auto m = Model::from_gguf(std::move(*p.file));
        ASSERT_FALSE(m.ok()) << tc.named;
        EXPECT_NE(m.error().find(tc.named), std::string::npos) << m.error();
    }
    Parsed whole = parse(moe_model("qwen2moe"));
    auto m = Model::from_gguf(std::move(*whole.file));
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ((*m)->weights().layers[1].moe.down.size(), static_cast<size_t>(kExperts));
    EXPECT_EQ((*m)->moe_counters()->n_expert(), kExperts);
}

}  // namespace
}  // namespace tessera
