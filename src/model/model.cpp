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
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace tessera {

// Tokens per forward chunk: bounds the workspace while keeping matmuls wide.
constexpr int64_t kChunk = 128;

struct Model::Workspace {
    std::vector<float> x;      // [kChunk, n_embd] residual stream
    std::vector<float> h;      // [kChunk, n_embd] normed input
    std::vector<float> q;      // [kChunk, q_dim]
    std::vector<float> k;      // [kChunk, kv_dim]
    std::vector<float> v;      // [kChunk, kv_dim]
    std::vector<float> attn;   // [kChunk, q_dim]
    std::vector<float> proj;   // [kChunk, n_embd]
    std::vector<float> gate;   // [kChunk, n_ff]
    std::vector<float> up;     // [kChunk, n_ff]
    std::vector<uint8_t> scratch;  // matmul activation quantization
    RopeTable rope;
};

Model::Model(GgufFile file, ModelConfig config, ModelWeights weights)
    : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)),
      ws_(std::make_unique<Workspace>()) {
    const auto& c = config_;
    ws_->x.resize(kChunk * c.n_embd);
    ws_->h.resize(kChunk * c.n_embd);
    ws_->q.resize(kChunk * c.q_dim());
    ws_->k.resize(kChunk * c.kv_dim());
    ws_->v.resize(kChunk * c.kv_dim());
    ws_->attn.resize(kChunk * c.q_dim());
    ws_->proj.resize(kChunk * c.n_embd);
    ws_->gate.resize(kChunk * c.n_ff);
    ws_->up.resize(kChunk * c.n_ff);
}

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

KvCache Model::make_kv_cache(int64_t n_ctx, int block_size) const {
    const int64_t n_blocks = std::max<int64_t>(1, (n_ctx + block_size - 1) / block_size);
    return KvCache(config_.n_layer, config_.kv_dim(), static_cast<int>(n_blocks), block_size);
}

Status Model::forward(KvCache& cache, SequenceKv& seq, std::span<const int32_t> tokens, bool all_logits,
                      std::vector<float>& logits, ThreadPool& pool) {
    if (tokens.empty()) return Status::error("forward: no tokens");
    for (int32_t t : tokens) {
        if (t < 0 || t >= config_.n_vocab) {
            return Status::error("token id " + std::to_string(t) + " is out of range [0, " +
                                 std::to_string(config_.n_vocab) + ")");
        }
    }
    if (!seq.reserve(cache, static_cast<int64_t>(tokens.size()))) {
        return Status::error("KV cache is full (context of " +
                             std::to_string(static_cast<int64_t>(cache.n_blocks()) * cache.block_size()) +
                             " tokens)");
    }
    const int64_t n_vocab = config_.n_vocab;
    logits.resize(static_cast<size_t>((all_logits ? tokens.size() : 1) * n_vocab));
    std::vector<float> chunk_logits;
    for (size_t start = 0; start < tokens.size(); start += kChunk) {
        const size_t n = std::min<size_t>(kChunk, tokens.size() - start);
        const bool last_chunk = start + n == tokens.size();
        if (!all_logits && !last_chunk) {
            forward_chunk(cache, seq, tokens.subspan(start, n), false, chunk_logits, pool);
            continue;
        }
        forward_chunk(cache, seq, tokens.subspan(start, n), all_logits, chunk_logits, pool);
        float* dst = all_logits ? logits.data() + start * n_vocab : logits.data();
        std::copy(chunk_logits.begin(), chunk_logits.end(), dst);
    }
    return Status();
}

void Model::forward_chunk(KvCache& cache, SequenceKv& seq, std::span<const int32_t> tokens, bool all_logits,
                          std::vector<float>& logits, ThreadPool& pool) {
    const auto& c = config_;
    const int64_t n = static_cast<int64_t>(tokens.size());
    const int64_t pos0 = seq.n_tokens;
    Workspace& ws = *ws_;
    for (int64_t t = 0; t < n; ++t) {
        embedding_row(weights_.token_embd.type, weights_.token_embd.data, weights_.token_embd.row_bytes,
                      tokens[t], c.n_embd, ws.x.data() + t * c.n_embd);
    }
    for (int l = 0; l < c.n_layer; ++l) {
        attention_layer(l, cache, seq, pos0, n, pool);
        ffn_layer(l, n, pool);
    }
    seq.n_tokens += n;

    // Only the rows whose logits are wanted go through the (large) output head.
    const int64_t first = all_logits ? 0 : n - 1;
    const int64_t n_out = n - first;
    rmsnorm(ws.x.data() + first * c.n_embd, weights_.output_norm, ws.h.data(), n_out, c.n_embd, c.norm_eps);
    logits.resize(static_cast<size_t>(n_out * c.n_vocab));
    matmul(weights_.output, ws.h.data(), n_out, logits.data(), pool, ws.scratch);
}

void Model::attention_layer(int layer, KvCache& cache, const SequenceKv& seq, int64_t pos0, int64_t n,
                            ThreadPool& pool) {
    const auto& c = config_;
    const LayerWeights& w = weights_.layers[layer];
    Workspace& ws = *ws_;
    rmsnorm(ws.x.data(), w.attn_norm, ws.h.data(), n, c.n_embd, c.norm_eps);
    matmul(w.wq, ws.h.data(), n, ws.q.data(), pool, ws.scratch);
    matmul(w.wk, ws.h.data(), n, ws.k.data(), pool, ws.scratch);
    matmul(w.wv, ws.h.data(), n, ws.v.data(), pool, ws.scratch);

    uint16_t* k_pool = cache.k_pool(layer);
    uint16_t* v_pool = cache.v_pool(layer);
    const int bs = cache.block_size();
    for (int64_t t = 0; t < n; ++t) {
        float* q = ws.q.data() + t * c.q_dim();
        float* k = ws.k.data() + t * c.kv_dim();
        float* v = ws.v.data() + t * c.kv_dim();
        if (w.bq) {
            add_inplace(q, w.bq, c.q_dim());
            add_inplace(k, w.bk, c.kv_dim());
            add_inplace(v, w.bv, c.kv_dim());
        }
        rope_table(c.rope, pos0 + t, ws.rope);
        rope_apply(c.rope, ws.rope, q, c.n_head, c.head_dim);
        rope_apply(c.rope, ws.rope, k, c.n_head_kv, c.head_dim);
        const int64_t pos = pos0 + t;
        const int64_t slot = static_cast<int64_t>(seq.block_table[pos / bs]) * bs + pos % bs;
        for (int d = 0; d < c.kv_dim(); ++d) {
            k_pool[slot * c.kv_dim() + d] = fp32_to_fp16(k[d]);
            v_pool[slot * c.kv_dim() + d] = fp32_to_fp16(v[d]);
        }
    }

    const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    const PagedKv kv{k_pool, v_pool, seq.block_table.data(), bs, c.kv_dim()};
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            attend_one(shape, kv, ws.q.data() + t * c.q_dim(), pos0 + t + 1, ws.attn.data() + t * c.q_dim());
        }
    });
    matmul(w.wo, ws.attn.data(), n, ws.proj.data(), pool, ws.scratch);
    add_inplace(ws.x.data(), ws.proj.data(), n * c.n_embd);
}

void Model::ffn_layer(int layer, int64_t n, ThreadPool& pool) {
    const auto& c = config_;
    const LayerWeights& w = weights_.layers[layer];
    Workspace& ws = *ws_;
    rmsnorm(ws.x.data(), w.ffn_norm, ws.h.data(), n, c.n_embd, c.norm_eps);
    matmul(w.w_gate, ws.h.data(), n, ws.gate.data(), pool, ws.scratch);
    matmul(w.w_up, ws.h.data(), n, ws.up.data(), pool, ws.scratch);
    swiglu_inplace(ws.gate.data(), ws.up.data(), n * c.n_ff);
    matmul(w.w_down, ws.gate.data(), n, ws.proj.data(), pool, ws.scratch);
    add_inplace(ws.x.data(), ws.proj.data(), n * c.n_embd);
}

}  // namespace tessera
