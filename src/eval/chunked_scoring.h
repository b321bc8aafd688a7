// Scores a long token sequence the way llama.cpp's perplexity tool does, so
// the figures are comparable: the text is cut into chunks of n_ctx tokens,
// each evaluated from an empty context, and only the second half of each
// chunk is scored (every scored token has at least n_ctx/2 tokens of
// context). Several chunks share each forward pass as separate sequences of
// one ragged batch, so the weights are read once for all of them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/status.h"
#include "core/thread_pool.h"
#include "model/model.h"

namespace tessera {

struct ChunkedScoringOptions {
    int n_ctx = 512;
    int n_parallel = 4;      // chunks per forward pass
    int max_chunks = 0;      // 0: every whole chunk of the text
    int batch_tokens = 512;  // tokens per forward pass (split across the chunks)
    int32_t bos = -1;        // when >= 0, each chunk's first token is replaced by it
    KvTypes kv_types{};      // the engine's default unless asked otherwise
};

// One scored position: `logits` (n_vocab values) predict `next_token`.
struct ScoredPosition {
    int chunk = 0;
    int position = 0;  // within the chunk, in [n_ctx/2, n_ctx - 1)
    std::span<const float> logits;
    int32_t next_token = 0;
};

// How many chunks `options` scores from n_tokens tokens.
int scored_chunks(int64_t n_tokens, const ChunkedScoringOptions& options);

// Calls on_position for every scored position (in an order that depends on
// n_parallel and batch_tokens: key results by chunk and position) and
// on_chunk once a chunk's positions have all been given. Errors:
// fewer tokens than one chunk, token ids out of range.
Status score_chunks(Model& model, std::span<const int32_t> tokens, const ChunkedScoringOptions& options,
                    ThreadPool& pool, const std::function<void(const ScoredPosition&)>& on_position,
                    const std::function<void(int chunk)>& on_chunk);

}  // namespace tessera
