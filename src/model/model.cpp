// The forward pass: embedding (scaled by sqrt(n_embd) for gemma, by its
// embedding_scale for granite) -> the architecture's layer graph x n_layer
// (model/arch.h) -> RMSNorm -> output head (soft-capped for gemma2, divided
// by logit_scale for granite). Activations live in a preallocated
// workspace; weights are used in place from the mapping.
#include "model/model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/activations.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "model/arch.h"
#include "model/forward_pass.h"
#include "tensor/quant.h"

namespace tessera {

// Tokens per pass when one long sequence is run alone (CLI, tests): bounds
// the workspace while keeping matmuls wide.
constexpr int64_t kChunk = 256;

Model::Model(GgufFile file, ModelConfig config, ModelWeights weights)
    : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)),
      ws_(std::make_unique<ForwardWorkspace>()) {
    if (config_.is_moe()) moe_counters_ = std::make_unique<MoeCounters>(config_.n_layer, config_.n_expert);
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

Status Model::forward_batch(const Batch& batch, KvCache& cache, std::vector<float>& logits, ThreadPool& pool,
                            std::vector<float>* hidden) {
    const auto& c = config_;
    const auto n = static_cast<int64_t>(batch.tokens.size());
    if (n == 0) return Status::error("forward: empty batch");
    for (int32_t t : batch.tokens) {
        if (t < 0 || t >= c.n_vocab) {
            return Status::error("token id " + std::to_string(t) + " is out of range [0, " +
                                 std::to_string(c.n_vocab) + ")");
        }
    }
    ForwardWorkspace& ws = *ws_;
    ws.reserve(c, n);
    const ThreadPool::Busy busy(pool);
    const bool local_rope = !ws.rope_local.empty();
    for_token_ranges(pool, n, [&](int, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            rope_table(c.rope, batch.position(t), ws.rope[static_cast<size_t>(t)]);
            if (local_rope) rope_table(c.rope_local, batch.position(t), ws.rope_local[static_cast<size_t>(t)]);
        }
    });
    for (int64_t t = 0; t < n; ++t) {
        embedding_row(weights_.token_embd.type, weights_.token_embd.data, weights_.token_embd.row_bytes,
                      batch.tokens[t], c.n_embd, ws.x.data() + t * c.n_embd);
    }
    if (c.embedding_scale != 1.0f) {  // gemma: sqrt(n_embd); granite: its embedding_scale
        for (int64_t i = 0; i < n * c.n_embd; ++i) ws.x[static_cast<size_t>(i)] *= c.embedding_scale;
    }
    ForwardPass pass{c, weights_, ws, batch, cache, pool, n, moe_counters_.get(), activation_stats_};
    const LayerGraph layer = layer_graph(c);
    for (int l = 0; l < c.n_layer; ++l) layer(pass, l);
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
    if (c.final_softcap > 0) softcap_inplace(logits.data(), n_out * c.n_vocab, c.final_softcap);
    if (c.logit_scale != 1.0f) {  // granite divides its logits
        for (float& v : logits) v /= c.logit_scale;
    }
    if (hidden != nullptr) final_hidden_rows(batch, *hidden);
    return Status();
}

// The output norm of every want_hidden row, in token order: what the LM head
// would read, and what embeddings pool (model/pooling.h).
void Model::final_hidden_rows(const Batch& batch, std::vector<float>& hidden) const {
    const auto& c = config_;
    const ForwardWorkspace& ws = *ws_;
    int64_t n_hidden = 0;
    for (uint8_t w : batch.want_hidden) n_hidden += w;
    hidden.resize(static_cast<size_t>(n_hidden * c.n_embd));
    int64_t row = 0;
    for (size_t t = 0; t < batch.want_hidden.size(); ++t) {
        if (!batch.want_hidden[t]) continue;
        rmsnorm(ws.x.data() + static_cast<int64_t>(t) * c.n_embd, weights_.output_norm,
                hidden.data() + row * c.n_embd, 1, c.n_embd, c.norm_eps);
        ++row;
    }
}

}  // namespace tessera
