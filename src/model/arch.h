// One layer's graph per architecture family, built from model/blocks.h:
//  - arch_llama.cpp: llama, mistral, smollm, granite (its multipliers are
//    in the shared blocks), qwen2 (QKV bias), qwen3 (QK-norm) and phi3 (fused QKV and gate/up, bound as row ranges by
//    ModelWeights): pre-norm attention and SwiGLU FFN. The qwen differences
//    are options of the shared attention block, driven by which weights exist.
//  - arch_gemma.cpp: gemma2 and gemma3: sliding-window layers interleaved with
//    global ones, norms before and after attention and FFN, GeGLU.
//  - arch_moe.cpp: qwen3moe, olmoe, granitemoe, mixtral (llama with experts) and
//    gpt-oss: llama's layer with routed experts (model/moe_ffn.h) in place of
//    the dense FFN. gpt-oss's differences are options driven by its config and
//    weights: attention sinks and biases, sliding-window layers 0, 2, 4...,
//    router and expert biases, a clamped SwiGLU.
//  - arch_qwen2moe.cpp: qwen2moe: the same plus its gated shared expert.
//  - arch_olmo2.cpp: olmo2: no norms before attention and FFN, RMSNorm after
//    each (before the residual add), QK-norm over the whole projections.
// smollm3 (every 4th layer without RoPE) and mistral3 (YaRN, query
// temperature) run llama's layer: their differences are config options.
// Embedding scaling and final soft-capping are in Model::forward_batch.
#pragma once

#include "model/forward_pass.h"

namespace tessera {

using LayerGraph = void (*)(ForwardPass& p, int layer);

void llama_layer(ForwardPass& p, int layer);
void gemma_layer(ForwardPass& p, int layer);
void moe_layer(ForwardPass& p, int layer);
void qwen2moe_layer(ForwardPass& p, int layer);
void olmo2_layer(ForwardPass& p, int layer);

inline LayerGraph layer_graph(const ModelConfig& c) {
    switch (c.kind) {
        case ArchKind::Gemma2:
        case ArchKind::Gemma3:
            return gemma_layer;
        case ArchKind::Qwen2Moe:
            return qwen2moe_layer;
        case ArchKind::Qwen3Moe:
        case ArchKind::Olmoe:
        case ArchKind::GraniteMoe:
        case ArchKind::GptOss:
            return moe_layer;
        case ArchKind::Olmo2:
            return olmo2_layer;
        case ArchKind::Granite:
        case ArchKind::SmolLM3:
        case ArchKind::Mistral3:
            return llama_layer;
        case ArchKind::Llama:
            return c.is_moe() ? moe_layer : llama_layer;
        case ArchKind::Qwen2:
        case ArchKind::Qwen3:
        case ArchKind::Phi3:
            break;
    }
    return llama_layer;
}

}  // namespace tessera
