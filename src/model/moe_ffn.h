// The feed-forward half of a mixture-of-experts layer, grouped by expert:
// every token of the pass is routed (model/moe_router.h) to k experts; the
// tokens of each expert are gathered into one block of rows and that
// expert's gate/up/down matrices are multiplied once for the whole block,
// so a batched step or a prefill reads each used expert's weights once, not
// once per token, and a decode step reads only the experts its tokens chose.
// Each token's output is the weighted sum of its experts' rows, added in
// rank order: the result of a token does not depend on the batch around it.
#pragma once

#include "model/forward_pass.h"

namespace tessera {

// Routed experts of one layer: ws.h -> ws.proj. gpt-oss adds its router
// bias to the logits, each expert's biases after its projections, and the
// clamped SwiGLU of ModelConfig::swiglu_limit. Records every pass over an
// expert's weights in p.moe_counters when it is set.
void moe_ffn_block(ForwardPass& p, int layer);

// qwen2moe's shared expert, run after moe_ffn_block (it reuses its
// buffers): ws.proj += sigmoid(ffn_gate_inp_shexp · h) * SwiGLU_shexp(ws.h).
void shared_expert_block(ForwardPass& p, int layer);

}  // namespace tessera
