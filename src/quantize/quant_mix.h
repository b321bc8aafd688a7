// Which weight type each tensor of a model gets when it is quantized to a
// named mix ("Q4_K_M", "Q8_0", ...), the names llama.cpp's users know.
// The rules are tessera's own, modelled on llama.cpp's documented choices:
//  - tensors of one dimension (norms, biases) keep their type;
//  - the output projection (or the token embedding, when it is tied and so
//    also serves as the output) gets Q6_K in every mix below 8 bits, since
//    its errors reach every logit directly;
//  - `_M` mixes give attn_v and ffn_down Q6_K in the layers where extra bits
//    pay most: the first and last eighth of the layers and every third layer
//    between them; Q4_K_S gives attn_v Q5_K in the first 4 layers and
//    ffn_down Q5_K in the first eighth; other `_S` mixes use the base type;
//  - Q2_K, Q3_K_M and Q3_K_L give attn_v, attn_output and ffn_down of every
//    layer one more step (Q3_K, Q4_K, Q5_K: llama.cpp's usual choice for
//    these mixes, without its per-layer exceptions);
//  - a type whose block does not divide a row falls back to one that does
//    (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K / Q3_K / IQ4_XS ->
//    IQ4_NL, 32-element types -> F16).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/ggml_type.h"

namespace tessera {

struct QuantMix {
    std::string name;     // "Q4_K_M"
    GgmlType base;        // the type most weights get
    uint32_t file_type;   // general.file_type (llama.cpp's llama_ftype value)
    bool more_bits_for_sensitive = false;  // the `_M` rule above
    bool q5_k_early_layers = false;        // the Q4_K_S rule above
    std::optional<GgmlType> sensitive_type = std::nullopt;  // the Q2_K / Q3_K_M / Q3_K_L rule above
};

// The mixes tessera can write; an unknown name lists them in its error.
Expected<QuantMix> find_quant_mix(std::string_view name);
std::vector<std::string> quant_mix_names();

struct TensorShapeInfo {
    std::string_view name;  // GGUF tensor name, e.g. "blk.3.attn_v.weight"
    int n_dims = 0;
    int64_t row_elems = 0;  // ne[0]
    GgmlType type = GgmlType::F32;  // its type in the source file
};

// The type `tensor` gets in `mix`. n_layers is the model's block_count;
// has_output says the model has its own output.weight (untied).
GgmlType choose_tensor_type(const QuantMix& mix, const TensorShapeInfo& tensor, int n_layers,
                            bool has_output);

}  // namespace tessera
