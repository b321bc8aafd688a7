// Causal attention over K/V rows read through a block table in their storage
// type (F32, F16, BF16 or Q8_0, converted in registers), with an online
// (streaming) softmax so no score matrix is ever materialised. The
// batched entry point groups query heads per KV head (GQA) and tokens per
// sequence so each K/V row is read once per group, and splits long contexts.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/ggml_type.h"
#include "kernels/dot_kernels.h"

namespace tessera {

// One layer's K and V pools. Slot s (block * block_size + offset) holds the
// kv_dim elements of one position: V as the row at v_pool + s * v_row_bytes,
// K keys in lanes within block b at k_pool + b * block_size * k_row_bytes
// (scatter_k_row, tensor/kv_type.h). Position p of a sequence lives at slot
// block_table[p / block_size] + p % block_size: a run need not start a block
// (a half block holds the short last run of a sequence).
struct PagedKv {
    const uint8_t* k_pool;       // [n_blocks] blocks, readable kKeysInLanesPadBytes past the end
    const uint8_t* v_pool;       // [n_slots] rows of v_row_bytes
    GgmlType k_type, v_type;     // F32, F16, BF16 or Q8_0 (head_dim % 32 == 0)
    int64_t k_row_bytes, v_row_bytes;  // one position's kv_dim elements
    const int32_t* block_table;  // entry i: the slot of position i * block_size (model/kv_cache.h)
    int block_size;
    int kv_dim;                  // n_head_kv * head_dim
};

struct AttentionShape {
    int n_head;
    int n_head_kv;
    int head_dim;
    float scale;  // usually 1/sqrt(head_dim)
    // Sliding-window attention (gemma2/3 local layers): a query at position
    // p sees positions > p - window only; 0 = the whole causal context.
    int64_t window = 0;
    // Attention logit soft-capping (gemma2): score = softcap * tanh(score /
    // softcap), applied after `scale`; 0 = off.
    float softcap = 0.0f;
    // Attention sinks (gpt-oss): one learned logit per query head that joins
    // the softmax's denominator but adds no value, [n_head]; null = none.
    // Applied where each row's sum is final, so every range kernel runs.
    const float* sinks = nullptr;
    // The range kernels ignore `window` (attention_batch plans pieces inside
    // the windows); only the scalar one implements `softcap`, so soft-capped
    // shapes run it (correct, slower; SIMD soft-capping is a later step).
};

// The scalar reference: one head of one query token attends to positions
// [0, n_ctx) (the last `window` of them when s.window > 0). q and out are that head's [head_dim] slices; `head` picks the
// KV head (head / group size). block_size must be at most 256.
void attend_head(const AttentionShape& s, const PagedKv& kv, const float* q, int head, int64_t n_ctx, float* out);

// One work piece for a range kernel: query rows of n_tok consecutive tokens
// of one sequence x the `group` query heads of each of the n_kv_heads KV
// heads from kv_head, against the positions [p0, p1) (token i sees positions
// < ctx0 + i). Row r = (i * n_kv_heads + h) * group + g reads
// q + i * q_stride + (h * group + g) * head_dim and attends to KV head
// kv_head + h. Outputs are the unnormalised softmax-weighted V sum, the
// running max and the running sum per row.
struct AttnRange {
    const float* q;
    int64_t q_stride;
    int n_tok;
    int group;
    int kv_head;
    int n_kv_heads;
    int64_t ctx0;
    int64_t p0, p1;
    float* acc;  // [n_tok * group, head_dim]
    float* m;    // [n_tok * group]
    float* l;    // [n_tok * group]
};
using AttendRangeFn = void (*)(const AttentionShape& s, const PagedKv& kv, const AttnRange& r);

// The range kernel at `level` (or the best lower level that supports this
// head_dim and these storage types); the scalar version always exists.
AttendRangeFn find_attend_range(SimdLevel level, int head_dim, GgmlType k_type, GgmlType v_type);

// A run of consecutive tokens of one sequence in a batch.
struct AttnSeq {
    const int32_t* block_table;
    int64_t pos0;    // position of the first token
    int32_t first;   // index of that token in the batch
    int32_t n_tokens;
};

struct AttnPieceInfo {
    int32_t seq;         // index into the AttnSeq list
    int32_t split_item;  // pieces of one split item share this id; -1 if unsplit
    int64_t out_offset;  // float offset of the piece's first output row
};

// Reusable buffers of attention_batch (grown, never shrunk).
struct AttentionScratch {
    std::vector<AttnRange> pieces;
    std::vector<AttnPieceInfo> info;  // [pieces.size()]
    std::vector<float> partial;       // acc, m, l of every piece
};

// Attention of every batch token to its own sequence's positions [0, pos]
// (or (pos - window, pos] with a sliding window).
// q and out: [n_tokens, n_head * head_dim]; kv's pools hold every
// sequence's K/V (already written for the batch tokens; kv.block_table is
// ignored, each AttnSeq brings its own).
void attention_batch(const AttentionShape& s, const PagedKv& kv, const std::vector<AttnSeq>& seqs, const float* q, float* out, ThreadPool& pool,
                     AttentionScratch& scratch, SimdLevel level);

}  // namespace tessera
