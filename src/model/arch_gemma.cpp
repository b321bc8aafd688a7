// The gemma2/gemma3 layer:
//   x += RMSNorm_post(attn(RMSNorm(x)));  x += RMSNorm_post(GeGLU(RMSNorm(x)))
// Local layers attend to the last sliding_window positions only and (gemma3)
// use their own RoPE base. The (1 + w) of Gemma's RMSNorm is already in the
// GGUF weights (llama.cpp's converter adds 1), so plain RMSNorm is right here.
// The KV of positions that slid out of every local layer's window is kept
// (only masked): freeing those blocks is a later step.
#include "model/arch.h"
#include "model/blocks.h"

namespace tessera {

void gemma_layer(ForwardPass& p, int layer) {
    const ModelConfig& c = p.c;
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    const bool local = c.is_local_layer(layer);
    const bool own_rope = local && c.kind == ArchKind::Gemma3;
    norm_rows(p, w.attn_norm, ws.x.data(), ws.h.data());
    attention_block(p, layer, own_rope ? &c.rope_local : &c.rope, own_rope ? ws.rope_local : ws.rope,
                    local ? c.sliding_window : 0);
    norm_rows(p, w.post_attn_norm, ws.proj.data(), ws.proj.data());
    add_residual(p);
    norm_rows(p, w.ffn_norm, ws.x.data(), ws.h.data());
    gated_ffn_block(p, layer, GateActivation::GeluTanh);
    norm_rows(p, w.post_ffn_norm, ws.proj.data(), ws.proj.data());
    add_residual(p);
}

}  // namespace tessera
