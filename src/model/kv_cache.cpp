// Block pool bookkeeping for the KV cache.
#include "model/kv_cache.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {

KvCache::KvCache(int n_layer, int kv_dim, int n_blocks, int block_size)
    : n_layer_(n_layer), kv_dim_(kv_dim), n_blocks_(n_blocks), block_size_(block_size), blocks_(n_blocks) {
    TS_CHECK(n_layer > 0 && kv_dim > 0 && n_blocks > 0 && block_size > 0);
    const size_t n = static_cast<size_t>(n_layer) * n_blocks * block_size * kv_dim;
    k_.assign(n, 0.0f);
    v_.assign(n, 0.0f);
}

void KvCache::copy_block(int32_t src, int32_t dst) {
    TS_CHECK(src >= 0 && src < n_blocks_ && dst >= 0 && dst < n_blocks_);
    const size_t rows = static_cast<size_t>(block_size_) * kv_dim_;
    for (int l = 0; l < n_layer_; ++l) {
        std::copy(k_pool(l) + src * rows, k_pool(l) + (src + 1) * rows, k_pool(l) + dst * rows);
        std::copy(v_pool(l) + src * rows, v_pool(l) + (src + 1) * rows, v_pool(l) + dst * rows);
    }
}

bool SequenceKv::reserve(KvCache& cache, int64_t extra) {
    const int64_t need_tokens = n_tokens + extra;
    const int64_t need_blocks = (need_tokens + cache.block_size() - 1) / cache.block_size();
    const int64_t missing = need_blocks - static_cast<int64_t>(block_table.size());
    if (missing <= 0) return true;
    if (missing > cache.free_blocks()) return false;
    for (int64_t k = 0; k < missing; ++k) block_table.push_back(cache.blocks().allocate());
    return true;
}

void SequenceKv::release(KvCache& cache) {
    for (int32_t b : block_table) cache.blocks().unref(b);
    block_table.clear();
    n_tokens = 0;
}

}  // namespace tessera
