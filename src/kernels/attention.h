// Causal attention over F32 K/V rows read through a block table, with an
// online (streaming) softmax so no score matrix is ever materialised.
#pragma once

#include <cstdint>

namespace tessera {

struct PagedKv {
    const float* k_pool;         // [n_slots, kv_dim]
    const float* v_pool;         // [n_slots, kv_dim]
    const int32_t* block_table;  // block of each block_size run of positions
    int block_size;
    int kv_dim;                  // n_head_kv * head_dim
};

struct AttentionShape {
    int n_head;
    int n_head_kv;
    int head_dim;
    float scale;  // usually 1/sqrt(head_dim)
};

// One head of one query token attends to positions [0, n_ctx). q and out are
// that head's [head_dim] slices; `head` picks the KV head (head / group size).
// block_size must be at most 256.
void attend_head(const AttentionShape& s, const PagedKv& kv, const float* q, int head, int64_t n_ctx, float* out);

}  // namespace tessera
