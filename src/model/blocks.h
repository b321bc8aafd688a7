// The building blocks the architecture graphs (model/arch_*.cpp) are made
// of. Each works on the pass's n batch tokens in the workspace: norms read
// one buffer and write another, the attention and FFN blocks read ws.h and
// leave their output projection in ws.proj, add_residual folds ws.proj into
// the residual stream ws.x.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/rope.h"
#include "model/forward_pass.h"

namespace tessera {

// out = RMSNorm(in) * weight, row by row over n_embd; in and out may alias.
void norm_rows(ForwardPass& p, const float* weight, const float* in, float* out);

// ws.x += ws.proj (times config.residual_scale when it is not 1: granite).
void add_residual(ForwardPass& p);

// Self-attention of one layer: Q/K/V projections of ws.h (+ bias when the
// layer has one, + RMSNorm of Q and K when it has q_norm/k_norm: per head, or
// over the whole projections with config.qk_norm_full),
// RoPE `rope` with `angles` (its table for each batch token; no RoPE when
// rope is null: smollm3's nope layers), the query temperature of
// config.attn_temp_scale, K/V appended to the cache (q, K and V Hadamard-
// rotated first where the cache's types ask for it, the output rotated back:
// kernels/kv_rotation.h), causal attention (the
// last `window` positions only when window > 0, logits soft-capped by
// config.attn_softcap; the layer's attention sinks when it has them), output
// projection (+ bias when the layer has one: gpt-oss) into ws.proj.
void attention_block(ForwardPass& p, int layer, const RopeParams* rope, const std::vector<RopeTable>& angles,
                     int64_t window);

// ws.h = ws.x: the input of a block that has no norm before it (olmo2).
void copy_residual(ForwardPass& p);

enum class GateActivation { Silu, GeluTanh };

// Gated feed-forward of one layer: down(act(gate(ws.h)) * up(ws.h)) into ws.proj.
void gated_ffn_block(ForwardPass& p, int layer, GateActivation act);

}  // namespace tessera
