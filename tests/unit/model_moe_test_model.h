// A small random-weight mixture-of-experts GGUF (F32), built in memory for
// the MoE unit tests: qwen3moe (per-head QK-norm), qwen2moe (QKV bias and
// a shared expert) or gpt-oss (biases everywhere, sinks, a 4-position window
// on layer 0), 16 experts of which each token uses 4.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace tessera::moe_test {

constexpr int kVocab = 64, kEmbd = 64, kLayers = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 16;
constexpr int kExperts = 16, kUsed = 4, kFfExp = 32, kFfShexp = 48, kWindow = 4;

// Tensors to leave out or reshape, to test the loader's errors.
struct Damage {
    std::string drop;           // a tensor name not to write
    std::string wrong_experts;  // a 3-D tensor written with one expert too few
};

inline GgufWriter moe_model(const std::string& arch, uint32_t seed = 1, const Damage& damage = {}) {
    GgufWriter w;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    w.add_string("general.architecture", arch);
    w.add_uint32(arch + ".embedding_length", kEmbd);
    w.add_uint32(arch + ".block_count", kLayers);
    w.add_uint32(arch + ".feed_forward_length", 4 * kEmbd);
    w.add_uint32(arch + ".attention.head_count", kHeads);
    w.add_uint32(arch + ".attention.head_count_kv", kKvHeads);
    w.add_float32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
    w.add_float32(arch + ".rope.freq_base", 1e6f);
    w.add_uint32(arch + ".expert_count", kExperts);
    w.add_uint32(arch + ".expert_used_count", kUsed);
    w.add_uint32(arch + ".expert_feed_forward_length", kFfExp);
    if (arch == "qwen2moe") w.add_uint32(arch + ".expert_shared_feed_forward_length", kFfShexp);
    const bool oss = arch == "gpt-oss";
    if (oss) w.add_uint32(arch + ".attention.sliding_window", kWindow);
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0.0f) {
        if (name == damage.drop) return;
        if (name == damage.wrong_experts) shape.back() -= 1;
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        for (float& x : v) x = offset + scale * normal(rng);
        std::vector<uint8_t> bytes(v.size() * sizeof(float));
        std::memcpy(bytes.data(), v.data(), bytes.size());
        w.add_tensor(name, GgmlType::F32, std::move(shape), std::move(bytes));
    };
    const float s = 1.0f / std::sqrt(static_cast<float>(kEmbd));
    const int64_t q_dim = kHeads * kHeadDim, kv_dim = kKvHeads * kHeadDim;
    tensor("token_embd.weight", {kEmbd, kVocab}, 1.0f);
    for (int l = 0; l < kLayers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        tensor(p + "attn_norm.weight", {kEmbd}, 0.1f, 1.0f);
        tensor(p + "attn_q.weight", {kEmbd, q_dim}, 1.5f * s);
        tensor(p + "attn_k.weight", {kEmbd, kv_dim}, 1.5f * s);
        tensor(p + "attn_v.weight", {kEmbd, kv_dim}, s);
        if (arch == "qwen2moe" || oss) {
            tensor(p + "attn_q.bias", {q_dim}, 0.1f);
            tensor(p + "attn_k.bias", {kv_dim}, 0.1f);
            tensor(p + "attn_v.bias", {kv_dim}, 0.1f);
        } else {
            tensor(p + "attn_q_norm.weight", {kHeadDim}, 0.1f, 1.0f);
            tensor(p + "attn_k_norm.weight", {kHeadDim}, 0.1f, 1.0f);
        }
        tensor(p + "attn_output.weight", {q_dim, kEmbd}, s);
        if (oss) {
            tensor(p + "attn_output.bias", {kEmbd}, 0.1f);
            tensor(p + "attn_sinks.weight", {kHeads}, 1.0f);
            tensor(p + "ffn_gate_inp.bias", {kExperts}, 0.5f);
            tensor(p + "ffn_gate_exps.bias", {kFfExp, kExperts}, 0.1f);
            tensor(p + "ffn_up_exps.bias", {kFfExp, kExperts}, 0.1f);
            tensor(p + "ffn_down_exps.bias", {kEmbd, kExperts}, 0.1f);
        }
        tensor(p + (oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {kEmbd}, 0.1f, 1.0f);
        tensor(p + "ffn_gate_inp.weight", {kEmbd, kExperts}, 2.0f * s);
        // gpt-oss: gain 4, so its SwiGLU clamp (at 7) acts.
        tensor(p + "ffn_gate_exps.weight", {kEmbd, kFfExp, kExperts}, (oss ? 4.0f : 1.0f) * s);
        tensor(p + "ffn_up_exps.weight", {kEmbd, kFfExp, kExperts}, (oss ? 4.0f : 1.0f) * s);
        tensor(p + "ffn_down_exps.weight", {kFfExp, kEmbd, kExperts}, 1.0f / std::sqrt(float{kFfExp}));
        if (arch == "qwen2moe") {
            tensor(p + "ffn_gate_inp_shexp.weight", {kEmbd}, s);
            tensor(p + "ffn_gate_shexp.weight", {kEmbd, kFfShexp}, s);
            tensor(p + "ffn_up_shexp.weight", {kEmbd, kFfShexp}, s);
            tensor(p + "ffn_down_shexp.weight", {kFfShexp, kEmbd}, 1.0f / std::sqrt(float{kFfShexp}));
        }
    }
    tensor("output_norm.weight", {kEmbd}, 0.1f, 1.0f);
    tensor("output.weight", {kEmbd, kVocab}, s);
    return w;
}

}  // namespace tessera::moe_test
