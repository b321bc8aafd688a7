// ModelConfig for the architectures beyond llama: which keys qwen3, gemma2,
// gemma3 and phi3 read, their defaults (gemma2's window, the layer patterns,
// gemma3's local RoPE base, the 27B query scale), olmo2's, smollm3's and
// mistral3's and gpt-oss's options, and the files refused with a message
// (unknown architecture, gemma3 without a window, LongRoPE, Olmo 3's window,
// mistral3 with experts, a temperature without an original context, gpt-oss
// without its window or experts, or with an array window pattern).
// Only metadata and token_embd are needed for a config, so no weights here;
// the forward passes are checked against a reference in
// tests/e2e/test_arch_coverage.py and tests/e2e/test_arch_hf.py.
#include "model/model_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/model_weights.h"

namespace tessera {
namespace {

constexpr int kEmbd = 64, kVocab = 8;

// A GGUF with the metadata of a small `arch` model and its token_embd.
GgufWriter small_model(const std::string& arch, uint32_t n_layer = 12) {
    GgufWriter w;
    w.add_string("general.architecture", arch);
    w.add_uint32(arch + ".embedding_length", kEmbd);
    w.add_uint32(arch + ".block_count", n_layer);
    w.add_uint32(arch + ".feed_forward_length", 128);
    w.add_uint32(arch + ".attention.head_count", 4);
    w.add_uint32(arch + ".attention.head_count_kv", 2);
    w.add_float32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
    w.add_float32(arch + ".rope.freq_base", 1e6f);
    w.add_tensor("token_embd.weight", GgmlType::F32, {kEmbd, kVocab}, std::vector<uint8_t>(kEmbd * kVocab * 4));
    return w;
}

Expected<ModelConfig> config_of(const GgufWriter& w, std::vector<uint8_t>& bytes) {
    bytes = w.build();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    if (!file) return file.status();
    return ModelConfig::from_gguf(*file);
}

TEST(ModelConfigArch, UnknownArchitectureNamesTheSupportedOnes) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("phi2"), bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("'phi2'"), std::string::npos) << c.error();
    EXPECT_NE(c.error().find("gemma3"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, Qwen3HasQkNormAndNeoxRope) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("qwen3"), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Qwen3);
    EXPECT_TRUE(c->qk_norm);
    EXPECT_FALSE(c->qkv_bias);
    EXPECT_EQ(c->rope.style, RopeStyle::Neox);
    EXPECT_EQ(c->sliding_window, 0);
    EXPECT_FALSE(c->is_local_layer(0));
}

TEST(ModelConfigArch, Gemma2AlternatesLocalAndGlobalWithDefaultWindow) {
    GgufWriter w = small_model("gemma2");
    w.add_float32("gemma2.attn_logit_softcapping", 50.0f);
    w.add_float32("gemma2.final_logit_softcapping", 30.0f);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->sliding_window, 4096);  // no key: gemma2's window
    EXPECT_TRUE(c->is_local_layer(0));
    EXPECT_FALSE(c->is_local_layer(1));
    EXPECT_TRUE(c->is_local_layer(10));
    EXPECT_FLOAT_EQ(c->attn_softcap, 50.0f);
    EXPECT_FLOAT_EQ(c->final_softcap, 30.0f);
    EXPECT_FLOAT_EQ(c->rope_local.freq_base, c->rope.freq_base);  // one RoPE for all layers
    EXPECT_FALSE(c->qk_norm);
}

TEST(ModelConfigArch, Gemma3HasOneGlobalLayerInSixAndItsOwnLocalRope) {
    GgufWriter w = small_model("gemma3");
    w.add_uint32("gemma3.attention.sliding_window", 512);
    w.add_string("gemma3.rope.scaling.type", "linear");
    w.add_float32("gemma3.rope.scaling.factor", 8.0f);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->sliding_window, 512);
    for (int l = 0; l < 12; ++l) EXPECT_EQ(c->is_local_layer(l), l != 5 && l != 11) << l;
    EXPECT_TRUE(c->qk_norm);
    EXPECT_FLOAT_EQ(c->rope.freq_base, 1e6f);
    EXPECT_FLOAT_EQ(c->rope.freq_scale, 0.125f);
    EXPECT_FLOAT_EQ(c->rope_local.freq_base, 10000.0f);
    EXPECT_FLOAT_EQ(c->rope_local.freq_scale, 1.0f);
    EXPECT_FLOAT_EQ(c->attn_scale, 1.0f / std::sqrt(16.0f));  // head_dim 64 / 4 heads
}

TEST(ModelConfigArch, Gemma27BScalesQueriesByEmbdOverHeads) {
    // GGUF has no query_pre_attn_scalar: the 27B models (62 layers for
    // gemma3) scale by n_embd / n_head, here with a key_length that differs.
    GgufWriter w = small_model("gemma3", 62);
    w.add_uint32("gemma3.attention.sliding_window", 512);
    w.add_uint32("gemma3.attention.key_length", 32);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->head_dim, 32);
    EXPECT_FLOAT_EQ(c->attn_scale, 1.0f / std::sqrt(16.0f));
}

TEST(ModelConfigArch, Gemma3WithoutAWindowIsRefused) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("gemma3"), bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("sliding_window"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, Phi3LongRopeIsRefusedByName) {
    GgufWriter w = small_model("phi3");
    w.add_tensor("rope_factors_long.weight", GgmlType::F32, {8}, std::vector<uint8_t>(32));
    const std::vector<uint8_t> bytes = w.build();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.error();
    auto c = ModelConfig::from_gguf(*file);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Phi3);
    auto weights = ModelWeights::bind(*file, *c);
    ASSERT_FALSE(weights.ok());
    EXPECT_NE(weights.error().find("LongRoPE"), std::string::npos) << weights.error();
}

TEST(ModelConfigArch, Olmo2NormsWholeQkProjectionsWithNeoxRope) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("olmo2"), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Olmo2);
    EXPECT_TRUE(c->qk_norm_full);
    EXPECT_EQ(c->rope.style, RopeStyle::Neox);
}

TEST(ModelConfigArch, Olmo2WithASlidingWindowIsRefused) {
    GgufWriter w = small_model("olmo2");
    w.add_uint32("olmo2.attention.sliding_window", 4096);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("sliding_window"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, SmolLM3SkipsRopeOnEveryFourthLayer) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("smollm3", 8), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->rope.style, RopeStyle::Normal);
    std::vector<int> nope;
    for (int l = 0; l < c->n_layer; ++l) {
        if (c->is_nope_layer(l)) nope.push_back(l);
    }
    EXPECT_EQ(nope, (std::vector<int>{3, 7}));
}

TEST(ModelConfigArch, LlamaHasRopeOnEveryLayer) {
    std::vector<uint8_t> bytes;
    auto c = config_of(small_model("llama", 8), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    for (int l = 0; l < c->n_layer; ++l) EXPECT_FALSE(c->is_nope_layer(l)) << l;
    EXPECT_EQ(c->attn_temp_scale, 0.0f);
}

GgufWriter mistral3_model() {
    GgufWriter w = small_model("mistral3");
    w.add_string("mistral3.rope.scaling.type", "yarn");
    w.add_float32("mistral3.rope.scaling.factor", 16.0f);
    w.add_uint32("mistral3.rope.scaling.original_context_length", 16384);
    w.add_float32("mistral3.rope.scaling.yarn_beta_fast", 4.0f);
    w.add_float32("mistral3.rope.scaling.yarn_beta_slow", 0.5f);
    w.add_float32("mistral3.rope.scaling.yarn_log_multiplier", 1.0f);
    w.add_float32("mistral3.attention.temperature_scale", 0.1f);
    return w;
}

TEST(ModelConfigArch, Mistral3ReadsYarnAndQueryTemperature) {
    std::vector<uint8_t> bytes;
    auto c = config_of(mistral3_model(), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::Mistral3);
    EXPECT_EQ(c->rope.style, RopeStyle::Normal);
    EXPECT_FLOAT_EQ(c->rope.freq_scale, 1.0f / 16.0f);
    EXPECT_FLOAT_EQ(c->rope.beta_fast, 4.0f);
    EXPECT_FLOAT_EQ(c->rope.beta_slow, 0.5f);
    // mscale_all_dim = 1 cancels YaRN's magnitude: attn_factor * (1 + 0.1 ln 16) = 1.
    EXPECT_NEAR(c->rope.attn_factor * (1.0f + 0.1f * std::log(16.0f)), 1.0f, 1e-6f);
    EXPECT_FLOAT_EQ(c->attn_temp_scale, 0.1f);
    EXPECT_EQ(c->attn_temp_length, 16384);
}

TEST(ModelConfigArch, Mistral3WithExpertsIsRefused) {
    GgufWriter w = mistral3_model();
    w.add_uint32("mistral3.expert_count", 8);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("experts"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, Mistral3TemperatureWithoutOriginalContextIsRefused) {
    GgufWriter w = small_model("mistral3");
    w.add_uint32("mistral3.rope.scaling.original_context_length", 0);
    w.add_float32("mistral3.attention.temperature_scale", 0.1f);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("temperature_scale"), std::string::npos) << c.error();
}

// gpt-oss's metadata as llama.cpp's converter writes it (minus the vocab).
GgufWriter gpt_oss_model() {
    GgufWriter w = small_model("gpt-oss", 4);
    w.add_uint32("gpt-oss.expert_count", 8);
    w.add_uint32("gpt-oss.expert_used_count", 2);
    w.add_uint32("gpt-oss.expert_feed_forward_length", 96);
    w.add_uint32("gpt-oss.attention.sliding_window", 128);
    w.add_string("gpt-oss.rope.scaling.type", "yarn");
    w.add_float32("gpt-oss.rope.scaling.factor", 32.0f);
    w.add_uint32("gpt-oss.rope.scaling.original_context_length", 4096);
    return w;
}

TEST(ModelConfigArch, GptOssReadsWindowExpertsYarnAndClamp) {
    std::vector<uint8_t> bytes;
    auto c = config_of(gpt_oss_model(), bytes);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c->kind, ArchKind::GptOss);
    EXPECT_EQ(c->rope.style, RopeStyle::Neox);
    EXPECT_TRUE(c->qkv_bias);
    EXPECT_FALSE(c->qk_norm);
    EXPECT_EQ(c->sliding_window, 128);
    for (int l = 0; l < 4; ++l) EXPECT_EQ(c->is_local_layer(l), l % 2 == 0) << l;  // layer 0 is windowed
    EXPECT_EQ(c->n_expert, 8);
    EXPECT_EQ(c->n_expert_used, 2);
    EXPECT_EQ(c->n_ff_exp, 96);
    EXPECT_EQ(c->expert_gating, ExpertGating::Softmax);
    EXPECT_TRUE(c->expert_weights_norm);  // softmax over the k chosen logits
    EXPECT_FLOAT_EQ(c->swiglu_limit, 7.0f);
    EXPECT_FLOAT_EQ(c->swiglu_alpha, 1.702f);
    EXPECT_FLOAT_EQ(c->rope.freq_scale, 1.0f / 32.0f);
    EXPECT_EQ(c->rope.n_ctx_orig, 4096);
    EXPECT_GT(c->rope.ext_factor, 0.0f);
    EXPECT_FALSE(c->rope.yarn_truncate);
    EXPECT_NE(c->describe().find("swiglu_clamp"), std::string::npos);
}

TEST(ModelConfigArch, GptOssWithoutAWindowIsRefused) {
    GgufWriter w = small_model("gpt-oss", 4);
    w.add_uint32("gpt-oss.expert_count", 8);
    w.add_uint32("gpt-oss.expert_used_count", 2);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("sliding_window"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, GptOssWithoutExpertsIsRefused) {
    GgufWriter w = small_model("gpt-oss", 4);
    w.add_uint32("gpt-oss.attention.sliding_window", 128);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("expert_count"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, GptOssWithItsOwnWindowRopeBaseIsRefused) {
    GgufWriter w = gpt_oss_model();
    w.add_float32("gpt-oss.rope.freq_base_swa", 10000.0f);
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("freq_base_swa"), std::string::npos) << c.error();
}

TEST(ModelConfigArch, GptOssWindowPatternAsAnArrayIsRefused) {
    // llama.cpp's writer may store the pattern as one flag per layer; that
    // form is not read yet, so it is refused rather than misread.
    GgufWriter w = gpt_oss_model();
    w.add_float32_array("gpt-oss.attention.sliding_window_pattern", {1, 0, 1, 0});
    std::vector<uint8_t> bytes;
    auto c = config_of(w, bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("sliding_window_pattern"), std::string::npos) << c.error();
}

}  // namespace
}  // namespace tessera
