// The qwen2moe layer: qwen2's attention (QKV bias), then routed experts plus
// a shared expert that every token runs, scaled by its own sigmoid gate:
//   x += attn(RMSNorm(x))
//   h = RMSNorm(x);  x += sum_j w_j * expert_j(h) + sigmoid(g · h) * shared(h)
#include "model/arch.h"
#include "model/blocks.h"
#include "model/moe_ffn.h"

namespace tessera {

void qwen2moe_layer(ForwardPass& p, int layer) {
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    norm_rows(p, w.attn_norm, ws.x.data(), ws.h.data());
    attention_block(p, layer, &p.c.rope, ws.rope, 0);
    add_residual(p);
    norm_rows(p, w.ffn_norm, ws.x.data(), ws.h.data());
    moe_ffn_block(p, layer);
    shared_expert_block(p, layer);
    add_residual(p);
}

}  // namespace tessera
