// The olmo2 layer: norms after the blocks instead of before them,
//   x += RMSNorm_post(attn(x));  x += RMSNorm_post(SwiGLU(x))
// with Q and K each RMS-normed over the whole projection (all heads at
// once) before RoPE: the shared attention block's qk_norm_full step.
#include "model/arch.h"
#include "model/blocks.h"

namespace tessera {

void olmo2_layer(ForwardPass& p, int layer) {
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    copy_residual(p);
    attention_block(p, layer, &p.c.rope, ws.rope, 0);
    norm_rows(p, w.post_attn_norm, ws.proj.data(), ws.proj.data());
    add_residual(p);
    copy_residual(p);
    gated_ffn_block(p, layer, GateActivation::Silu);
    norm_rows(p, w.post_ffn_norm, ws.proj.data(), ws.proj.data());
    add_residual(p);
}

}  // namespace tessera
