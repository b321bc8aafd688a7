// Block pool bookkeeping for the KV cache.
#include "model/kv_cache.h"

#include "core/check.h"

namespace tessera {

KvCache::KvCache(int n_layer, int kv_dim, int n_blocks, int block_size)
    : n_layer_(n_layer), kv_dim_(kv_dim), n_blocks_(n_blocks), block_size_(block_size) {
    TS_CHECK(n_layer > 0 && kv_dim > 0 && n_blocks > 0 && block_size > 0);
    const size_t n = static_cast<size_t>(n_layer) * n_blocks * block_size * kv_dim;
    k_.assign(n, 0);
    v_.assign(n, 0);
    free_.reserve(n_blocks);
    for (int b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

int KvCache::allocate_block() {
    if (free_.empty()) return -1;
    int b = free_.back();
    free_.pop_back();
    return b;
}

void KvCache::release_block(int block) {
    TS_CHECK(block >= 0 && block < n_blocks_);
    free_.push_back(block);
}

bool SequenceKv::reserve(KvCache& cache, int64_t extra) {
    const int64_t need_tokens = n_tokens + extra;
    const int64_t need_blocks = (need_tokens + cache.block_size() - 1) / cache.block_size();
    const int64_t missing = need_blocks - static_cast<int64_t>(block_table.size());
    if (missing <= 0) return true;
    if (missing > cache.free_blocks()) return false;
    for (int64_t k = 0; k < missing; ++k) block_table.push_back(cache.allocate_block());
    return true;
}

void SequenceKv::release(KvCache& cache) {
    for (int32_t b : block_table) cache.release_block(b);
    block_table.clear();
    n_tokens = 0;
}

}  // namespace tessera
