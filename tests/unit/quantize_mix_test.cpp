// Per-tensor type rules of the quantization mixes (quantize/quant_mix.h).
#include <gtest/gtest.h>

#include "quantize/quant_mix.h"

namespace tessera {
namespace {

GgmlType pick(const char* mix_name, const char* tensor, int64_t row, int n_layers = 32, bool has_output = true,
              int n_dims = 2) {
    auto mix = find_quant_mix(mix_name);
    EXPECT_TRUE(mix.ok()) << mix.error();
    return choose_tensor_type(mix.value(), TensorShapeInfo{tensor, n_dims, row, GgmlType::F16}, n_layers,
                              has_output);
}

TEST(QuantMix, NamesAndErrors) {
    EXPECT_EQ(find_quant_mix("Q4_K")->name, "Q4_K_M");
    EXPECT_EQ(find_quant_mix("Q8_0")->file_type, 7u);
    EXPECT_EQ(find_quant_mix("Q4_K_M")->file_type, 15u);
    auto bad = find_quant_mix("Q3_K_XL");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("Q4_K_M"), std::string::npos) << "the error lists the known types";
}

TEST(QuantMix, OneDimensionalTensorsKeepTheirType) {
    EXPECT_EQ(pick("Q4_0", "blk.0.attn_norm.weight", 4096, 32, true, 1), GgmlType::F16);
}

TEST(QuantMix, OutputGetsSixBitsBelowEight) {
    EXPECT_EQ(pick("Q4_0", "output.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q4_K_S", "output.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q8_0", "output.weight", 4096), GgmlType::Q8_0);
    EXPECT_EQ(pick("F16", "output.weight", 4096), GgmlType::F16);
    // Tied: the embedding is the output.
    EXPECT_EQ(pick("Q4_K_M", "token_embd.weight", 4096, 32, false), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q4_K_M", "token_embd.weight", 4096, 32, true), GgmlType::Q4_K);
}

TEST(QuantMix, MediumMixesGiveSensitiveLayersMoreBits) {
    // 32 layers: the first and last 4 (7/8 of 32 = 28), and every third from layer 6.
    EXPECT_EQ(pick("Q4_K_M", "blk.0.attn_v.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q4_K_M", "blk.31.ffn_down.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q4_K_M", "blk.6.ffn_down.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("Q4_K_M", "blk.7.ffn_down.weight", 4096), GgmlType::Q4_K);
    EXPECT_EQ(pick("Q4_K_M", "blk.0.attn_q.weight", 4096), GgmlType::Q4_K);
    EXPECT_EQ(pick("Q4_K_S", "blk.0.attn_v.weight", 4096), GgmlType::Q5_K);
    EXPECT_EQ(pick("Q4_K_S", "blk.4.attn_v.weight", 4096), GgmlType::Q4_K);
    EXPECT_EQ(pick("Q4_K_S", "blk.3.ffn_down.weight", 4096), GgmlType::Q5_K);
    EXPECT_EQ(pick("Q4_K_S", "blk.4.ffn_down.weight", 4096), GgmlType::Q4_K);
    EXPECT_EQ(pick("Q5_K_S", "blk.0.attn_v.weight", 4096), GgmlType::Q5_K);
    EXPECT_EQ(pick("Q5_K_M", "blk.0.attn_v.weight", 4096), GgmlType::Q6_K);
}

TEST(QuantMix, LowBitMixesGiveSensitiveTensorsOneStepMore) {
    EXPECT_EQ(find_quant_mix("Q3_K_M")->file_type, 12u);
    EXPECT_EQ(find_quant_mix("IQ4_XS")->file_type, 30u);
    EXPECT_EQ(pick("Q2_K", "blk.5.attn_q.weight", 4096), GgmlType::Q2_K);
    EXPECT_EQ(pick("Q2_K", "blk.5.attn_v.weight", 4096), GgmlType::Q3_K);
    EXPECT_EQ(pick("Q3_K_S", "blk.5.ffn_down.weight", 4096), GgmlType::Q3_K);
    EXPECT_EQ(pick("Q3_K_M", "blk.5.ffn_down.weight", 4096), GgmlType::Q4_K);
    EXPECT_EQ(pick("Q3_K_M", "blk.5.ffn_up.weight", 4096), GgmlType::Q3_K);
    EXPECT_EQ(pick("Q3_K_L", "blk.5.attn_output.weight", 4096), GgmlType::Q5_K);
    EXPECT_EQ(pick("Q3_K_L", "output.weight", 4096), GgmlType::Q6_K);
    EXPECT_EQ(pick("IQ4_NL", "blk.0.attn_v.weight", 4096), GgmlType::IQ4_NL);
    EXPECT_EQ(pick("IQ4_XS", "output.weight", 4096), GgmlType::Q6_K);
}

TEST(QuantMix, RowsThatBlocksDoNotDivideFallBack) {
    // SmolLM2-135M: 576-wide rows are not a multiple of 256.
    EXPECT_EQ(pick("Q4_K_M", "blk.1.attn_q.weight", 576), GgmlType::Q5_0);
    EXPECT_EQ(pick("Q5_K_S", "blk.1.attn_q.weight", 576), GgmlType::Q5_1);
    EXPECT_EQ(pick("Q6_K", "blk.1.attn_q.weight", 576), GgmlType::Q8_0);
    EXPECT_EQ(pick("Q2_K", "blk.1.attn_q.weight", 576), GgmlType::IQ4_NL);
    EXPECT_EQ(pick("Q3_K_S", "blk.1.attn_q.weight", 576), GgmlType::IQ4_NL);
    EXPECT_EQ(pick("IQ4_XS", "blk.1.attn_q.weight", 576), GgmlType::IQ4_NL);
    EXPECT_EQ(pick("IQ4_NL", "blk.1.attn_q.weight", 100), GgmlType::F16);
    EXPECT_EQ(pick("Q4_0", "blk.1.attn_q.weight", 100), GgmlType::F16);
}

}  // namespace
}  // namespace tessera
