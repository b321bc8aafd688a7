// Shared transformer building blocks over the pass's workspace. The
// llama path's arithmetic (order of operations, grouping of matmuls) is the
// one every architecture shares; options only add steps.
#include "model/blocks.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/activations.h"
#include "kernels/kv_rotation.h"
#include "kernels/rmsnorm.h"
#include "tensor/quant.h"

namespace tessera {

void norm_rows(ForwardPass& p, const float* weight, const float* in, float* out) {
    const int64_t d = p.c.n_embd;
    for_token_ranges(p.pool, p.n, [&](int, int64_t begin, int64_t end) {
        rmsnorm(in + begin * d, weight, out + begin * d, end - begin, d, p.c.norm_eps);
    });
}

void add_residual(ForwardPass& p) {
    const int64_t d = p.c.n_embd;
    ForwardWorkspace& ws = p.ws;
    const float scale = p.c.residual_scale;
    for_token_ranges(p.pool, p.n, [&](int, int64_t begin, int64_t end) {
        if (scale == 1.0f) {
            add_inplace(ws.x.data() + begin * d, ws.proj.data() + begin * d, (end - begin) * d);
            return;
        }
        for (int64_t i = begin * d; i < end * d; ++i) ws.x[i] += scale * ws.proj[i];  // granite
    });
}

void copy_residual(ForwardPass& p) {
    const int64_t d = p.c.n_embd;
    ForwardWorkspace& ws = p.ws;
    for_token_ranges(p.pool, p.n, [&](int, int64_t begin, int64_t end) {
        std::copy(ws.x.data() + begin * d, ws.x.data() + end * d, ws.h.data() + begin * d);
    });
}

namespace {

// The table of a sequence's slots in the pool this layer stores into.
const int32_t* kv_table(const BatchSequence& s, bool windowed) {
    TS_CHECK(!windowed || s.window_table != nullptr);
    return windowed ? s.window_table : s.block_table;
}

}  // namespace

void attention_block(ForwardPass& p, int layer, const RopeParams* rope, const std::vector<RopeTable>& angles,
                     int64_t window) {
    const ModelConfig& c = p.c;
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    const int64_t n = p.n;
    for (const WeightMatrix* m : {&w.wq, &w.wk, &w.wv}) record_input(p.activation_stats, *m, ws.h.data(), n);
    if (can_group(w.wq, w.wk) && can_group(w.wq, w.wv)) {
        const MatmulOut qkv[] = {{&w.wq, ws.q.data()}, {&w.wk, ws.k.data()}, {&w.wv, ws.v.data()}};
        matmul_group(qkv, ws.h.data(), n, p.pool, ws.scratch);
    } else {
        matmul(w.wq, ws.h.data(), n, ws.q.data(), p.pool, ws.scratch);
        matmul(w.wk, ws.h.data(), n, ws.k.data(), p.pool, ws.scratch);
        matmul(w.wv, ws.h.data(), n, ws.v.data(), p.pool, ws.scratch);
    }

    const int bs = p.cache.block_size();
    // A layer in the window pool never looks behind its window: the runs
    // there may be freed.
    const bool windowed = p.cache.windowed(layer);
    TS_CHECK(!windowed || window > 0);
    for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const RopeTable& table_t = angles[static_cast<size_t>(t)];
            float* q = ws.q.data() + t * c.q_dim();
            float* k = ws.k.data() + t * c.kv_dim();
            float* v = ws.v.data() + t * c.kv_dim();
            if (w.bq) {
                add_inplace(q, w.bq, c.q_dim());
                add_inplace(k, w.bk, c.kv_dim());
                add_inplace(v, w.bv, c.kv_dim());
            }
            if (w.q_norm && c.qk_norm_full) {  // olmoe: the whole projection is one row
                rmsnorm(q, w.q_norm, q, 1, c.q_dim(), c.norm_eps);
                rmsnorm(k, w.k_norm, k, 1, c.kv_dim(), c.norm_eps);
            } else if (w.q_norm) {  // each head's [head_dim] slice is a row
                rmsnorm(q, w.q_norm, q, c.n_head, c.head_dim, c.norm_eps);
                rmsnorm(k, w.k_norm, k, c.n_head_kv, c.head_dim, c.norm_eps);
            }
            const int64_t pos = p.batch.position(t);
            if (rope) {
                rope_apply(*rope, table_t, q, c.n_head, c.head_dim);
                rope_apply(*rope, table_t, k, c.n_head_kv, c.head_dim);
            }
            if (c.attn_temp_scale > 0) {  // mistral3: sharper attention far into a long context
                const float temp = 1.0f + c.attn_temp_scale * std::log1p(static_cast<float>(pos / c.attn_temp_length));
                for (int64_t i = 0; i < c.q_dim(); ++i) q[i] *= temp;
            }
            if (const int r = p.cache.k_rotation()) {  // scores unchanged, K quantizes better
                hadamard_blocks(q, c.q_dim(), r);
                hadamard_blocks(k, c.kv_dim(), r);
            }
            if (const int r = p.cache.v_rotation()) hadamard_blocks(v, c.kv_dim(), r);
            const int32_t* table = kv_table(p.batch.seqs[p.batch.seq_of[t]], windowed);
            // Tokens write distinct slots (distinct bytes of a shared K block).
            const int64_t slot = table[pos / bs] + pos % bs;
            p.cache.store(layer, slot, k, v);
        }
    });

    // Query heads are grouped per KV head and long contexts split, so a
    // single decode token still spreads over every core.
    AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, c.attn_scale};
    shape.window = window;
    shape.softcap = c.attn_softcap;
    shape.sinks = w.attn_sinks;
    ws.attn_seqs.clear();
    for (const BatchSequence& s : p.batch.seqs) {
        ws.attn_seqs.push_back(AttnSeq{kv_table(s, windowed), s.pos0, s.first, s.n_tokens});
    }
    attention_batch(shape, p.cache.view(layer), ws.attn_seqs, ws.q.data(), ws.attn.data(), p.pool,
                    ws.attn_scratch, best_simd_level());
    if (const int r = p.cache.v_rotation()) {  // V was stored rotated: rotate the output back
        for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
            hadamard_blocks(ws.attn.data() + begin * c.q_dim(), (end - begin) * c.q_dim(), r);
        });
    }
    record_input(p.activation_stats, w.wo, ws.attn.data(), n);
    matmul(w.wo, ws.attn.data(), n, ws.proj.data(), p.pool, ws.scratch);
    if (w.bo) {
        for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) add_inplace(ws.proj.data() + t * c.n_embd, w.bo, c.n_embd);
        });
    }
}

void gated_ffn_block(ForwardPass& p, int layer, GateActivation act) {
    const LayerWeights& w = p.weights.layers[layer];
    ForwardWorkspace& ws = p.ws;
    const int64_t n = p.n, n_ff = p.c.n_ff;
    record_input(p.activation_stats, w.w_gate, ws.h.data(), n);
    record_input(p.activation_stats, w.w_up, ws.h.data(), n);
    if (can_group(w.w_gate, w.w_up)) {
        const MatmulOut gate_up[] = {{&w.w_gate, ws.gate.data()}, {&w.w_up, ws.up.data()}};
        matmul_group(gate_up, ws.h.data(), n, p.pool, ws.scratch);
    } else {
        matmul(w.w_gate, ws.h.data(), n, ws.gate.data(), p.pool, ws.scratch);
        matmul(w.w_up, ws.h.data(), n, ws.up.data(), p.pool, ws.scratch);
    }
    for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
        float* gate = ws.gate.data() + begin * n_ff;
        const float* up = ws.up.data() + begin * n_ff;
        if (act == GateActivation::Silu) {
            swiglu_inplace(gate, up, (end - begin) * n_ff);
        } else {
            geglu_inplace(gate, up, (end - begin) * n_ff);
        }
    });
    record_input(p.activation_stats, w.w_down, ws.gate.data(), n);
    matmul(w.w_down, ws.gate.data(), n, ws.proj.data(), p.pool, ws.scratch);
}

}  // namespace tessera
