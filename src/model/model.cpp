// The llama-family forward pass (llama, mistral, smollm, qwen2 with QKV bias):
// embedding -> [RMSNorm -> attention -> residual -> RMSNorm -> SwiGLU FFN ->
// residual] x n_layer -> RMSNorm -> output head. Activations live in a
// preallocated workspace; weights are used in place from the mapping.
#include "model/model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/activations.h"
#include "kernels/attention.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "tensor/quant.h"

namespace tessera {

// Tokens per pass when one long sequence is run alone (CLI, tests): bounds
// the workspace while keeping matmuls wide.
constexpr int64_t kChunk = 256;
// The per-token work between the matmuls (norms, RoPE and cache writes,
// SwiGLU, residual adds) is split over the pool from this many tokens on;
// run on the calling thread alone it left the other cores idle for a few
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

struct Model::Workspace {
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
    std::vector<uint8_t> scratch;  // matmul activation quantization
    std::vector<AttnSeq> attn_seqs;
    AttentionScratch attn_scratch;
    // [capacity] each token's RoPE angles, computed once per forward pass:
    // per layer they were 0.8% of a 135M pp512 (cos, sin, pow per token).
    std::vector<RopeTable> rope;
    // Model::forward's one-sequence batch and one chunk's logits, kept so a
    // decode step reuses their storage.
    Batch single;
    std::vector<float> chunk_logits;

    // Grows (never shrinks) so steady-state steps allocate nothing.
    void reserve(const ModelConfig& c, int64_t n) {
        if (n <= capacity) return;
        capacity = n;
        rope.resize(n);
        x.resize(n * c.n_embd);
        h.resize(n * c.n_embd);
        q.resize(n * c.q_dim());
        k.resize(n * c.kv_dim());
        v.resize(n * c.kv_dim());
        attn.resize(n * c.q_dim());
        proj.resize(n * c.n_embd);
        gate.resize(n * c.n_ff);
        up.resize(n * c.n_ff);
    }
};

Model::Model(GgufFile file, ModelConfig config, ModelWeights weights)
    : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)),
      ws_(std::make_unique<Workspace>()) {}

Model::~Model() = default;

Expected<std::unique_ptr<Model>> Model::load(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) return file.status();
    auto model = from_gguf(std::move(*file));
    if (!model) return Status::error(path + ": " + model.error());
    return model;
}

Expected<std::unique_ptr<Model>> Model::from_gguf(GgufFile file) {
    auto config = ModelConfig::from_gguf(file);
    if (!config) return config.status();
    auto weights = ModelWeights::bind(file, *config);
    if (!weights) return weights.status();
    return std::unique_ptr<Model>(new Model(std::move(file), std::move(*config), std::move(*weights)));
}

Status Model::check_file() const {
    const MappedFile* m = file_.mapping();
    if (m == nullptr || (!m->damaged() && !m->shrunk())) return ok_status();
    return Status::error(file_changed_message());
}

std::string Model::file_changed_message() const {
    const MappedFile* m = file_.mapping();
    return "the model file '" + (m ? m->path() : std::string("?")) +
           "' changed on disk (truncated?) while being served; restart the server";
}

KvCache Model::make_kv_cache(int64_t n_ctx, KvTypes types, int block_size) const {
    const int64_t n_blocks = std::max<int64_t>(1, (n_ctx + block_size - 1) / block_size);
    return KvCache(config_.n_layer, config_.n_head_kv, config_.head_dim, static_cast<int>(n_blocks), block_size, types);
}

SoloSequence::SoloSequence(const KvCache& cache, int first_block, int n_blocks) {
    const int end = n_blocks < 0 ? cache.n_blocks() : std::min(cache.n_blocks(), first_block + n_blocks);
    for (int b = first_block; b < end; ++b) block_table.push_back(b * cache.block_size());
}

Status Model::forward(KvCache& cache, SoloSequence& seq, std::span<const int32_t> tokens, bool all_logits,
                      std::vector<float>& logits, ThreadPool& pool) {
    if (tokens.empty()) return Status::error("forward: no tokens");
    const int64_t capacity = static_cast<int64_t>(seq.block_table.size()) * cache.block_size();
    if (seq.n_tokens + static_cast<int64_t>(tokens.size()) > capacity) {
        return Status::error("KV cache is full (context of " + std::to_string(capacity) + " tokens)");
    }
    const size_t n_vocab = static_cast<size_t>(config_.n_vocab);
    logits.resize((all_logits ? tokens.size() : 1) * n_vocab);
    Batch& batch = ws_->single;
    std::vector<float>& chunk_logits = ws_->chunk_logits;
    for (size_t start = 0; start < tokens.size(); start += kChunk) {
        const size_t n = std::min<size_t>(kChunk, tokens.size() - start);
        const bool last_chunk = start + n == tokens.size();
        batch.clear();
        batch.add(seq.block_table.data(), seq.n_tokens, tokens.subspan(start, n), last_chunk, all_logits);
        TS_RETURN_IF_ERROR(forward_batch(batch, cache, chunk_logits, pool));
        seq.n_tokens += static_cast<int64_t>(n);
        if (all_logits || last_chunk) {
            std::copy(chunk_logits.begin(), chunk_logits.end(), logits.data() + (all_logits ? start * n_vocab : 0));
        }
    }
    return Status();
}

Status Model::forward_batch(const Batch& batch, KvCache& cache, std::vector<float>& logits, ThreadPool& pool) {
    const auto& c = config_;
    const auto n = static_cast<int64_t>(batch.tokens.size());
    if (n == 0) return Status::error("forward: empty batch");
    for (int32_t t : batch.tokens) {
        if (t < 0 || t >= c.n_vocab) {
            return Status::error("token id " + std::to_string(t) + " is out of range [0, " +
                                 std::to_string(c.n_vocab) + ")");
        }
    }
    Workspace& ws = *ws_;
    ws.reserve(c, n);
    const ThreadPool::Busy busy(pool);
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) rope_table(c.rope, batch.position(t), ws.rope[static_cast<size_t>(t)]);
    });
    for (int64_t t = 0; t < n; ++t) {
        embedding_row(weights_.token_embd.type, weights_.token_embd.data, weights_.token_embd.row_bytes,
                      batch.tokens[t], c.n_embd, ws.x.data() + t * c.n_embd);
    }
    for (int l = 0; l < c.n_layer; ++l) {
        attention_layer(l, batch, cache, pool);
        ffn_layer(l, n, pool);
    }
    // Only rows whose logits are wanted go through the (large) output head.
    int64_t n_out = 0;
    for (int64_t t = 0; t < n; ++t) {
        if (!batch.want_logits[t]) continue;
        rmsnorm(ws.x.data() + t * c.n_embd, weights_.output_norm, ws.h.data() + n_out * c.n_embd, 1, c.n_embd,
                c.norm_eps);
        ++n_out;
    }
    logits.resize(static_cast<size_t>(n_out * c.n_vocab));
    if (n_out > 0) matmul(weights_.output, ws.h.data(), n_out, logits.data(), pool, ws.scratch);
    return Status();
}

void Model::attention_layer(int layer, const Batch& batch, KvCache& cache, ThreadPool& pool) {
    const auto& c = config_;
    const LayerWeights& w = weights_.layers[layer];
    Workspace& ws = *ws_;
    const auto n = static_cast<int64_t>(batch.tokens.size());
    rms_norm_rows(w.attn_norm, n, pool);
    if (can_group(w.wq, w.wk) && can_group(w.wq, w.wv)) {
        const MatmulOut qkv[] = {{&w.wq, ws.q.data()}, {&w.wk, ws.k.data()}, {&w.wv, ws.v.data()}};
        matmul_group(qkv, ws.h.data(), n, pool, ws.scratch);
    } else {
        matmul(w.wq, ws.h.data(), n, ws.q.data(), pool, ws.scratch);
        matmul(w.wk, ws.h.data(), n, ws.k.data(), pool, ws.scratch);
        matmul(w.wv, ws.h.data(), n, ws.v.data(), pool, ws.scratch);
    }

    const int bs = cache.block_size();
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const RopeTable& rope = ws.rope[static_cast<size_t>(t)];
            float* q = ws.q.data() + t * c.q_dim();
            float* k = ws.k.data() + t * c.kv_dim();
            float* v = ws.v.data() + t * c.kv_dim();
            if (w.bq) {
                add_inplace(q, w.bq, c.q_dim());
                add_inplace(k, w.bk, c.kv_dim());
                add_inplace(v, w.bv, c.kv_dim());
            }
            const int64_t pos = batch.position(t);
            rope_apply(c.rope, rope, q, c.n_head, c.head_dim);
            rope_apply(c.rope, rope, k, c.n_head_kv, c.head_dim);
            const int32_t* table = batch.seqs[batch.seq_of[t]].block_table;
            // Tokens write distinct slots (distinct bytes of a shared K block).
            const int64_t slot = table[pos / bs] + pos % bs;
            cache.store(layer, slot, k, v);
        }
    });

    // Query heads are grouped per KV head and long contexts split, so a
    // single decode token still spreads over every core.
    const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    ws.attn_seqs.clear();
    for (const BatchSequence& s : batch.seqs) {
        ws.attn_seqs.push_back(AttnSeq{s.block_table, s.pos0, s.first, s.n_tokens});
    }
    attention_batch(shape, cache.view(layer), ws.attn_seqs, ws.q.data(), ws.attn.data(), pool, ws.attn_scratch,
                    best_simd_level());
    matmul(w.wo, ws.attn.data(), n, ws.proj.data(), pool, ws.scratch);
    add_residual(n, pool);
}

void Model::ffn_layer(int layer, int64_t n, ThreadPool& pool) {
    const auto& c = config_;
    const LayerWeights& w = weights_.layers[layer];
    Workspace& ws = *ws_;
    rms_norm_rows(w.ffn_norm, n, pool);
    if (can_group(w.w_gate, w.w_up)) {
        const MatmulOut gate_up[] = {{&w.w_gate, ws.gate.data()}, {&w.w_up, ws.up.data()}};
        matmul_group(gate_up, ws.h.data(), n, pool, ws.scratch);
    } else {
        matmul(w.w_gate, ws.h.data(), n, ws.gate.data(), pool, ws.scratch);
        matmul(w.w_up, ws.h.data(), n, ws.up.data(), pool, ws.scratch);
    }
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        swiglu_inplace(ws.gate.data() + begin * c.n_ff, ws.up.data() + begin * c.n_ff, (end - begin) * c.n_ff);
    });
    matmul(w.w_down, ws.gate.data(), n, ws.proj.data(), pool, ws.scratch);
    add_residual(n, pool);
}

void Model::rms_norm_rows(const float* weight, int64_t n, ThreadPool& pool) {
    const auto& c = config_;
    Workspace& ws = *ws_;
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        rmsnorm(ws.x.data() + begin * c.n_embd, weight, ws.h.data() + begin * c.n_embd, end - begin, c.n_embd,
                c.norm_eps);
    });
}

void Model::add_residual(int64_t n, ThreadPool& pool) {
    const auto& c = config_;
    Workspace& ws = *ws_;
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        add_inplace(ws.x.data() + begin * c.n_embd, ws.proj.data() + begin * c.n_embd, (end - begin) * c.n_embd);
    });
}

}  // namespace tessera
