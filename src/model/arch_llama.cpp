// The llama-family layer: x += attn(RMSNorm(x)); x += SwiGLU(RMSNorm(x)).
// qwen2's QKV bias and qwen3's per-head Q/K RMSNorm are steps of the shared
// attention block that run when the layer has those weights; smollm3's
// layers without RoPE and mistral3's query temperature are config options.
#include "model/arch.h"
#include "model/blocks.h"

namespace tessera {

void llama_layer(ForwardPass& p, int layer) {
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    norm_rows(p, w.attn_norm, ws.x.data(), ws.h.data());
    attention_block(p, layer, p.c.is_nope_layer(layer) ? nullptr : &p.c.rope, ws.rope, 0);
    add_residual(p);
    norm_rows(p, w.ffn_norm, ws.x.data(), ws.h.data());
    gated_ffn_block(p, layer, GateActivation::Silu);
    add_residual(p);
}

}  // namespace tessera
