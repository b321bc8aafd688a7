// The mix table and the per-tensor rules described in quant_mix.h.
#include "quantize/quant_mix.h"

#include <charconv>

#include "tensor/quant.h"

namespace tessera {
namespace {

// llama.cpp's llama_ftype numbers, so tools that read general.file_type
// name the file correctly.
const QuantMix kMixes[] = {
    {"F32", GgmlType::F32, 0},       {"F16", GgmlType::F16, 1},       {"BF16", GgmlType::BF16, 32},
    {"Q4_0", GgmlType::Q4_0, 2},     {"Q4_1", GgmlType::Q4_1, 3},     {"Q5_0", GgmlType::Q5_0, 8},
    {"Q5_1", GgmlType::Q5_1, 9},     {"Q8_0", GgmlType::Q8_0, 7},     {"Q4_K_S", GgmlType::Q4_K, 14, false, true},
    {"Q4_K_M", GgmlType::Q4_K, 15, true}, {"Q5_K_S", GgmlType::Q5_K, 16},
    {"Q5_K_M", GgmlType::Q5_K, 17, true}, {"Q6_K", GgmlType::Q6_K, 18},
    {"Q2_K", GgmlType::Q2_K, 10, false, false, GgmlType::Q3_K}, {"Q3_K_S", GgmlType::Q3_K, 11},
    {"Q3_K_M", GgmlType::Q3_K, 12, false, false, GgmlType::Q4_K},
    {"Q3_K_L", GgmlType::Q3_K, 13, false, false, GgmlType::Q5_K},
    {"IQ4_NL", GgmlType::IQ4_NL, 25},  {"IQ4_XS", GgmlType::IQ4_XS, 30},
};

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// "blk.N.<rest>" -> N, or nothing for tensors outside the layers.
std::optional<int> layer_of(std::string_view name) {
    if (!name.starts_with("blk.")) return std::nullopt;
    name.remove_prefix(4);
    int layer = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
    if (ec != std::errc() || end == name.data()) return std::nullopt;
    return layer;
}

bool gets_more_bits(int layer, int n_layers) {
    const int eighth = n_layers / 8;
    return layer < eighth || layer >= 7 * n_layers / 8 || (layer - eighth) % 3 == 2;
}

GgmlType fit_row(GgmlType t, int64_t row_elems) {
    while (row_elems % block_elems(t) != 0) {
        switch (t) {
            case GgmlType::Q4_K: t = GgmlType::Q5_0; break;
            case GgmlType::Q5_K: t = GgmlType::Q5_1; break;
            case GgmlType::Q6_K: t = GgmlType::Q8_0; break;
            case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::IQ4_XS: t = GgmlType::IQ4_NL; break;
            default: return GgmlType::F16;
        }
    }
    return t;
}

}  // namespace

Expected<QuantMix> find_quant_mix(std::string_view name) {
    // llama.cpp accepts the bare K names for the _M mixes.
    if (name == "Q4_K") name = "Q4_K_M";
    if (name == "Q5_K") name = "Q5_K_M";
    for (const auto& mix : kMixes) {
        if (mix.name == name) return mix;
    }
    std::string known;
    for (const auto& n : quant_mix_names()) known += (known.empty() ? "" : ", ") + n;
    return Status::error(ErrorKind::InvalidArgument,
                         "unknown quantization type '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> quant_mix_names() {
    std::vector<std::string> names;
    for (const auto& mix : kMixes) names.push_back(mix.name);
    return names;
}

GgmlType choose_tensor_type(const QuantMix& mix, const TensorShapeInfo& tensor, int n_layers,
                            bool has_output) {
    if (tensor.n_dims < 2) return tensor.type;
    GgmlType t = mix.base;
    const bool is_output = tensor.name == "output.weight" || (!has_output && tensor.name == "token_embd.weight");
    const bool below_8_bits = !is_float_type(mix.base) && mix.base != GgmlType::Q8_0;
    if (is_output && below_8_bits) {
        t = GgmlType::Q6_K;
    } else if (const auto layer = layer_of(tensor.name)) {
        const bool attn_v = tensor.name.ends_with("attn_v.weight");
        const bool ffn_down = tensor.name.ends_with("ffn_down.weight");
        const bool attn_output = tensor.name.ends_with("attn_output.weight");
        if (mix.sensitive_type && (attn_v || ffn_down || attn_output)) {
            t = *mix.sensitive_type;
        } else if (mix.more_bits_for_sensitive && (attn_v || ffn_down) && gets_more_bits(*layer, n_layers)) {
            t = GgmlType::Q6_K;
        } else if (mix.q5_k_early_layers && ((attn_v && *layer < 4) || (ffn_down && *layer < n_layers / 8))) {
            t = GgmlType::Q5_K;
        }
    }
    return fit_row(t, tensor.row_elems);
}

}  // namespace tessera
