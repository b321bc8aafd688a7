// Chunked, batched scoring (see chunked_scoring.h).
#include "eval/chunked_scoring.h"

#include <algorithm>
#include <string>
#include <vector>

#include "model/batch.h"

namespace tessera {

int scored_chunks(int64_t n_tokens, const ChunkedScoringOptions& options) {
    const int64_t whole = n_tokens / options.n_ctx;
    return static_cast<int>(options.max_chunks > 0 ? std::min<int64_t>(whole, options.max_chunks) : whole);
}

Status score_chunks(Model& model, std::span<const int32_t> tokens, const ChunkedScoringOptions& options,
                    ThreadPool& pool, const std::function<void(const ScoredPosition&)>& on_position,
                    const std::function<void(int chunk)>& on_chunk) {
    const int n_ctx = options.n_ctx;
    if (n_ctx < 4) return Status::error("the context must be at least 4 tokens");
    const int n_chunks = scored_chunks(static_cast<int64_t>(tokens.size()), options);
    if (n_chunks == 0) {
        return Status::error("the text has " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                             std::to_string(n_ctx));
    }
    const int n_parallel = std::clamp(options.n_parallel, 1, n_chunks);
    const int block_size = 16;
    const int blocks_per_seq = (n_ctx + block_size - 1) / block_size;
    KvCache cache = model.make_kv_cache(static_cast<int64_t>(n_parallel) * blocks_per_seq * block_size,
                                         options.kv_types, block_size);
    std::vector<SoloSequence> seqs;
    for (int s = 0; s < n_parallel; ++s) seqs.emplace_back(cache, s * blocks_per_seq, blocks_per_seq);

    const int first = n_ctx / 2;
    const auto n_vocab = static_cast<size_t>(model.config().n_vocab);
    Batch batch;
    std::vector<float> logits;
    std::vector<std::vector<int32_t>> chunk_tokens(static_cast<size_t>(n_parallel));
    for (int c0 = 0; c0 < n_chunks; c0 += n_parallel) {
        const int n_seq = std::min(n_parallel, n_chunks - c0);
        for (int s = 0; s < n_seq; ++s) {
            const auto begin = tokens.begin() + static_cast<int64_t>(c0 + s) * n_ctx;
            chunk_tokens[static_cast<size_t>(s)].assign(begin, begin + n_ctx);
            if (options.bos >= 0) chunk_tokens[static_cast<size_t>(s)][0] = options.bos;
        }
        const int step = std::max(1, options.batch_tokens / n_seq);
        for (int start = 0; start < n_ctx; start += step) {
            const int end = std::min(n_ctx, start + step);
            batch.clear();
            for (int s = 0; s < n_seq; ++s) {
                const auto& ct = chunk_tokens[static_cast<size_t>(s)];
                batch.add(seqs[static_cast<size_t>(s)].block_table.data(), start,
                          std::span<const int32_t>(ct).subspan(static_cast<size_t>(start), static_cast<size_t>(end - start)),
                          false);
                for (int j = start; j < end; ++j) {
                    if (j >= first && j < n_ctx - 1) batch.want_logits[batch.want_logits.size() - static_cast<size_t>(end - j)] = 1;
                }
            }
            if (batch.n_outputs() == 0) {  // the first half only fills the KV cache
                std::vector<float> unused;
                TS_RETURN_IF_ERROR(model.forward_batch(batch, cache, unused, pool));
                continue;
            }
            TS_RETURN_IF_ERROR(model.forward_batch(batch, cache, logits, pool));
            size_t row = 0;
            for (size_t t = 0; t < batch.tokens.size(); ++t) {
                if (!batch.want_logits[t]) continue;
                const int s = batch.seq_of[t];
                const auto j = static_cast<int>(batch.position(static_cast<int64_t>(t)));
                on_position(ScoredPosition{c0 + s, j, std::span<const float>(logits).subspan(row * n_vocab, n_vocab),
                                           chunk_tokens[static_cast<size_t>(s)][static_cast<size_t>(j + 1)]});
                ++row;
            }
        }
        for (int s = 0; s < n_seq; ++s) on_chunk(c0 + s);
    }
    return Status();
}

}  // namespace tessera
