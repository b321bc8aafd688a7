// What one forward pass over a batch works with, handed to the shared
// building blocks (model/blocks.h) and the per-architecture layer graphs
// (model/arch.h): the model's config and weights, the activation workspace,
// the batch, the KV cache and the thread pool.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/rope.h"
#include "model/activation_stats.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/moe_counters.h"
#include "model/moe_workspace.h"

namespace tessera {

// The per-token work between the matmuls (norms, RoPE and cache writes,
// activations, residual adds) is split over the pool from this many tokens
// on; run on the calling thread alone it left the other cores idle for a few
// percent of a prefill step. Below it a parallel region costs more than it
// saves (decode).
constexpr int64_t kParallelTokensMin = 16;

// Calls fn(thread, begin, end) over token ranges that cover [0, n): one
// range per pool thread for a large batch, else [0, n) on the caller.
// Every token's arithmetic is the same either way.
template <class F>
void for_token_ranges(ThreadPool& pool, int64_t n, const F& fn) {
    const int parts = n >= kParallelTokensMin ? pool.size() : 1;
    if (parts == 1) {
        fn(0, int64_t{0}, n);
        return;
    }
    pool.run([&](int idx, int) { fn(idx, n * idx / parts, n * (idx + 1) / parts); });
}

// Activations, preallocated and reused across passes.
struct ForwardWorkspace {
    int64_t capacity = 0;      // tokens the buffers below hold
    std::vector<float> x;      // [capacity, n_embd] residual stream
    std::vector<float> h;      // [capacity, n_embd] normed input
    std::vector<float> q;      // [capacity, q_dim]
    std::vector<float> k;      // [capacity, kv_dim]
    std::vector<float> v;      // [capacity, kv_dim]
    std::vector<float> attn;   // [capacity, q_dim]
    std::vector<float> proj;   // [capacity, n_embd]
    std::vector<float> gate;   // [capacity, n_ff]
    std::vector<float> up;     // [capacity, n_ff]
    MoeWorkspace moe;          // mixture-of-experts models only
    std::vector<uint8_t> scratch;  // matmul activation quantization
    std::vector<AttnSeq> attn_seqs;
    AttentionScratch attn_scratch;
    // [capacity] each token's RoPE angles, computed once per forward pass:
    // per layer they were 0.8% of a 135M pp512 (cos, sin, pow per token).
    std::vector<RopeTable> rope;
    // The same for the local layers' RoPE where it differs (gemma3), else empty.
    std::vector<RopeTable> rope_local;
    // Model::forward's one-sequence batch and one chunk's logits, kept so a
    // decode step reuses their storage.
    Batch single;
    std::vector<float> chunk_logits;

    // Grows (never shrinks) so steady-state steps allocate nothing.
    void reserve(const ModelConfig& c, int64_t n) {
        if (n <= capacity) return;
        capacity = n;
        rope.resize(n);
        if (c.kind == ArchKind::Gemma3) rope_local.resize(n);
        x.resize(n * c.n_embd);
        h.resize(n * c.n_embd);
        q.resize(n * c.q_dim());
        k.resize(n * c.kv_dim());
        v.resize(n * c.kv_dim());
        attn.resize(n * c.q_dim());
        proj.resize(n * c.n_embd);
        if (c.is_moe()) {  // no dense FFN
            moe.reserve(c, n);
        } else {
            gate.resize(n * c.n_ff);
            up.resize(n * c.n_ff);
        }
    }
};

struct ForwardPass {
    const ModelConfig& c;
    const ModelWeights& weights;
    ForwardWorkspace& ws;
    const Batch& batch;
    KvCache& cache;
    ThreadPool& pool;
    int64_t n;  // batch tokens
    MoeCounters* moe_counters = nullptr;  // mixture-of-experts models only
    ActivationStats* activation_stats = nullptr;  // set only while an importance matrix is gathered
};

// Hands x's n rows, the input of a matmul with w, to the pass's activation
// statistics when it gathers them (`tessera imatrix`).
inline void record_input(ActivationStats* stats, const WeightMatrix& w, const float* x, int64_t n) {
    if (stats != nullptr) stats->record(w, x, n);
}

}  // namespace tessera
