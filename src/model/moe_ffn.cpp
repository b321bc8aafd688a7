// Routing, a counting sort of the (token, expert) pairs by expert, gather,
// one SwiGLU FFN per used expert over its block of rows, weighted scatter.
#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/activations.h"
#include "model/moe_router.h"

namespace tessera {
namespace {

// gpt-oss's additions to an expert's SwiGLU: biases after each projection
// (null = none) and, when limit > 0, its clamped activation.
struct GluOptions {
    const float* gate_bias = nullptr;  // [n_ff]
    const float* up_bias = nullptr;    // [n_ff]
    const float* down_bias = nullptr;  // [n_embd]
    float limit = 0;
    float alpha = 0;
};

// gate = (clamp(up, -limit, limit) + 1) * g * sigmoid(alpha * g), g = min(gate, limit).
void clamped_swiglu_inplace(float* gate, const float* up, int64_t n, float limit, float alpha) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = std::min(gate[i], limit);
        const float u = std::clamp(up[i], -limit, limit);
        gate[i] = (u + 1.0f) * g / (1.0f + std::exp(-alpha * g));
    }
}

// Adds bias [cols] to each of `rows` rows of x.
void add_row_bias(float* x, const float* bias, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) add_inplace(x + r * cols, bias, cols);
}

// out = down(silu(gate · x) * (up · x)) for `rows` rows of x, on `pool`
// (with opt's biases and clamp when set); the matmuls' inputs go to `stats`.
void swiglu_ffn(ThreadPool& pool, std::vector<uint8_t>& scratch, ActivationStats* stats, const WeightMatrix& gate,
                const WeightMatrix& up, const WeightMatrix& down, const float* x, int64_t rows, float* gate_buf,
                float* up_buf, float* out, const GluOptions& opt) {
    record_input(stats, gate, x, rows);
    record_input(stats, up, x, rows);
    if (can_group(gate, up)) {
        const MatmulOut gate_up[] = {{&gate, gate_buf}, {&up, up_buf}};
        matmul_group(gate_up, x, rows, pool, scratch);
    } else {
        matmul(gate, x, rows, gate_buf, pool, scratch);
        matmul(up, x, rows, up_buf, pool, scratch);
    }
    const int64_t n_ff = gate.rows;
    for_token_ranges(pool, rows, [&](int, int64_t begin, int64_t end) {
        float* g = gate_buf + begin * n_ff;
        float* u = up_buf + begin * n_ff;
        if (opt.gate_bias) add_row_bias(g, opt.gate_bias, end - begin, n_ff);
        if (opt.up_bias) add_row_bias(u, opt.up_bias, end - begin, n_ff);
        if (opt.limit > 0) {
            clamped_swiglu_inplace(g, u, (end - begin) * n_ff, opt.limit, opt.alpha);
        } else {
            swiglu_inplace(g, u, (end - begin) * n_ff);
        }
    });
    record_input(stats, down, gate_buf, rows);
    matmul(down, gate_buf, rows, out, pool, scratch);
    if (opt.down_bias) {
        const int64_t d = down.rows;
        for_token_ranges(pool, rows, [&](int, int64_t begin, int64_t end) {
            add_row_bias(out + begin * d, opt.down_bias, end - begin, d);
        });
    }
}

// Routes every token and lays the (token, expert) pairs out by expert:
// expert e's pairs take slots [first_slot[e], first_slot[e + 1]), in token order.
void route_and_group(ForwardPass& p, const ExpertWeights& m) {
    const ModelConfig& c = p.c;
    MoeWorkspace& ws = p.ws.moe;
    const int64_t n = p.n, k = c.n_expert_used;
    record_input(p.activation_stats, m.gate_inp, p.ws.h.data(), n);
    matmul(m.gate_inp, p.ws.h.data(), n, ws.router_logits.data(), p.pool, p.ws.scratch);
    if (m.gate_inp_bias) add_row_bias(ws.router_logits.data(), m.gate_inp_bias, n, c.n_expert);
    const RouterParams router{c.n_expert, c.n_expert_used, c.expert_gating, c.expert_weights_norm, m.selection_bias};
    std::fill(ws.first_slot.begin(), ws.first_slot.end(), 0);
    for (int64_t t = 0; t < n; ++t) {
        route_token(router, ws.router_logits.data() + t * c.n_expert, ws.router_scratch, ws.expert_of.data() + t * k,
                    ws.weight_of.data() + t * k);
        for (int64_t j = 0; j < k; ++j) ++ws.first_slot[static_cast<size_t>(ws.expert_of[t * k + j]) + 1];
    }
    for (int32_t e = 0; e < c.n_expert; ++e) ws.first_slot[e + 1] += ws.first_slot[e];
    // Counting sort: a running cursor per expert, kept in the next expert's
    // start until the pass is over (then restored).
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t j = 0; j < k; ++j) {
            const int32_t slot = ws.first_slot[ws.expert_of[t * k + j]]++;
            ws.slot_of[t * k + j] = slot;
            ws.token_of[slot] = static_cast<int32_t>(t);
        }
    }
    for (int32_t e = c.n_expert; e > 0; --e) ws.first_slot[e] = ws.first_slot[e - 1];
    ws.first_slot[0] = 0;
}

// Hands the used experts to the pool's threads, largest first, each to the
// thread with the fewest rows so far (longest-processing-time scheduling:
// within one expert's rows of the best split).
void plan_lanes(ForwardPass& p) {
    MoeWorkspace& ws = p.ws.moe;
    if (ws.lanes.size() != static_cast<size_t>(p.pool.size())) {  // first step only
        ws.lanes.resize(static_cast<size_t>(p.pool.size()));
        for (ExpertLane& lane : ws.lanes) {
            lane.solo = std::make_unique<ThreadPool>(1);
            lane.experts.reserve(static_cast<size_t>(p.c.n_expert));
        }
    }
    for (ExpertLane& lane : ws.lanes) {
        lane.experts.clear();
        lane.rows = 0;
    }
    auto rows_of = [&](int32_t e) { return ws.first_slot[e + 1] - ws.first_slot[e]; };
    ws.by_rows.clear();
    for (int32_t e = 0; e < p.c.n_expert; ++e) {
        if (rows_of(e) > 0) ws.by_rows.push_back(e);
    }
    // std::sort, not stable_sort: that one allocates a buffer per call.
    std::sort(ws.by_rows.begin(), ws.by_rows.end(), [&](int32_t a, int32_t b) {
        return rows_of(a) != rows_of(b) ? rows_of(a) > rows_of(b) : a < b;
    });
    for (int32_t e : ws.by_rows) {
        const int64_t rows = rows_of(e);
        ExpertLane* least = &ws.lanes[0];
        for (ExpertLane& lane : ws.lanes) least = lane.rows < least->rows ? &lane : least;
        least->experts.push_back(e);
        least->rows += rows;
    }
}

}  // namespace

void moe_ffn_block(ForwardPass& p, int layer) {
    const ModelConfig& c = p.c;
    const ExpertWeights& m = p.weights.layers[layer].moe;
    MoeWorkspace& ws = p.ws.moe;
    const int64_t n = p.n, k = c.n_expert_used, d = c.n_embd, n_ff = c.n_ff_exp;
    route_and_group(p, m);
    const float* h = p.ws.h.data();
    for_token_ranges(p.pool, n * k, [&](int, int64_t begin, int64_t end) {
        for (int64_t s = begin; s < end; ++s) {
            std::memcpy(ws.x.data() + s * d, h + static_cast<int64_t>(ws.token_of[s]) * d, d * sizeof(float));
        }
    });
    // Expert e's FFN over its block of rows; experts no token chose are not touched.
    auto run_expert = [&](int32_t e, ThreadPool& pool, std::vector<uint8_t>& scratch) {
        const int64_t first = ws.first_slot[e], rows = ws.first_slot[e + 1] - first;
        GluOptions opt{nullptr, nullptr, nullptr, c.swiglu_limit, c.swiglu_alpha};
        if (m.gate_bias) {  // gpt-oss: all three or none (ModelWeights::bind)
            opt.gate_bias = m.gate_bias + e * n_ff;
            opt.up_bias = m.up_bias + e * n_ff;
            opt.down_bias = m.down_bias + e * d;
        }
        swiglu_ffn(pool, scratch, p.activation_stats, m.gate[e], m.up[e], m.down[e], ws.x.data() + first * d, rows,
                   ws.gate.data() + first * n_ff, ws.up.data() + first * n_ff, ws.y.data() + first * d, opt);
        if (p.moe_counters != nullptr) p.moe_counters->record_pass(layer, e, rows);
    };
    int32_t used = 0;
    for (int32_t e = 0; e < c.n_expert; ++e) used += ws.first_slot[e + 1] > ws.first_slot[e];
    // With at least two used experts per thread, whole experts go to the
    // threads: one parallel region for the layer's experts instead of two
    // per expert, whose wake-ups and joins dominated a decode step (each
    // expert is small). With fewer, each expert's rows are split over the
    // pool. The bits are the same either way (matmul results do not depend
    // on the pool).
    if (p.pool.size() > 1 && used >= 2 * p.pool.size()) {
        plan_lanes(p);
        p.pool.run([&](int idx, int) {
            ExpertLane& lane = ws.lanes[static_cast<size_t>(idx)];
            for (int32_t e : lane.experts) run_expert(e, *lane.solo, lane.scratch);
        });
    } else {
        for (int32_t e = 0; e < c.n_expert; ++e) {
            if (ws.first_slot[e + 1] > ws.first_slot[e]) run_expert(e, p.pool, p.ws.scratch);
        }
    }
    float* proj = p.ws.proj.data();
    for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            float* out = proj + t * d;
            std::fill(out, out + d, 0.0f);
            for (int64_t j = 0; j < k; ++j) {
                const float w = ws.weight_of[t * k + j];
                const float* y = ws.y.data() + static_cast<int64_t>(ws.slot_of[t * k + j]) * d;
                for (int64_t i = 0; i < d; ++i) out[i] += w * y[i];
            }
        }
    });
}

void shared_expert_block(ForwardPass& p, int layer) {
    const ExpertWeights& m = p.weights.layers[layer].moe;
    MoeWorkspace& ws = p.ws.moe;
    const int64_t n = p.n, d = p.c.n_embd;
    record_input(p.activation_stats, m.gate_inp_shexp, p.ws.h.data(), n);
    matmul(m.gate_inp_shexp, p.ws.h.data(), n, ws.shexp_gate.data(), p.pool, p.ws.scratch);
    swiglu_ffn(p.pool, p.ws.scratch, p.activation_stats, m.gate_shexp, m.up_shexp, m.down_shexp, p.ws.h.data(), n,
               ws.gate.data(), ws.up.data(), ws.y.data(), GluOptions{});
    float* proj = p.ws.proj.data();
    for_token_ranges(p.pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float g = 1.0f / (1.0f + std::exp(-ws.shexp_gate[t]));
            for (int64_t i = 0; i < d; ++i) proj[t * d + i] += g * ws.y[t * d + i];
        }
    });
}

}  // namespace tessera
