// The mixture-of-experts layer of qwen3moe, olmoe, granitemoe, mixtral (llama
// with experts) and gpt-oss: llama's pre-norm attention, with each
// architecture's attention options driven by its weights and config
// (qwen3moe: per-head QK-norm; olmoe: QK-norm over the whole projections;
// gpt-oss: biases, sinks, and every other layer windowed), then routed
// experts in place of the dense SwiGLU FFN (gpt-oss: biased, clamped):
//   x += attn(RMSNorm(x));  x += sum_j w_j * expert_j(RMSNorm(x))
#include "model/arch.h"
#include "model/blocks.h"
#include "model/moe_ffn.h"

namespace tessera {

void moe_layer(ForwardPass& p, int layer) {
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    norm_rows(p, w.attn_norm, ws.x.data(), ws.h.data());
    attention_block(p, layer, &p.c.rope, ws.rope, p.c.is_local_layer(layer) ? p.c.sliding_window : 0);
    add_residual(p);
    norm_rows(p, w.ffn_norm, ws.x.data(), ws.h.data());
    moe_ffn_block(p, layer);
    add_residual(p);
}

}  // namespace tessera
