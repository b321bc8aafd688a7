// KV storage in fixed-size blocks. Every layer keeps one pool of K rows and
// one of V rows (F32), addressed by (block, slot); a sequence owns a block
// table that maps its positions to blocks. Today one sequence uses it; the
// paged, shared cache of the serving work builds on the same layout.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/block_pool.h"
#include "core/status.h"

namespace tessera {

class KvCache {
public:
    KvCache(int n_layer, int kv_dim, int n_blocks, int block_size);

    int n_layer() const { return n_layer_; }
    int kv_dim() const { return kv_dim_; }
    int n_blocks() const { return n_blocks_; }
    int block_size() const { return block_size_; }

    // [n_blocks * block_size, kv_dim] F32 rows of one layer.
    float* k_pool(int layer) { return k_.data() + pool_offset(layer); }
    float* v_pool(int layer) { return v_.data() + pool_offset(layer); }
    const float* k_pool(int layer) const { return k_.data() + pool_offset(layer); }
    const float* v_pool(int layer) const { return v_.data() + pool_offset(layer); }

    // Reference-counted allocation of whole blocks (shared blocks: prefix
    // cache, parallel choices).
    BlockPool& blocks() { return blocks_; }
    const BlockPool& blocks() const { return blocks_; }
    int free_blocks() const { return blocks_.n_free(); }

    // Copies every layer's K/V rows of block `src` into `dst` (copy-on-write).
    void copy_block(int32_t src, int32_t dst);

private:
    size_t pool_offset(int layer) const {
        return static_cast<size_t>(layer) * static_cast<size_t>(n_blocks_) * block_size_ * kv_dim_;
    }
    int n_layer_, kv_dim_, n_blocks_, block_size_;
    std::vector<float> k_;  // [n_layer, n_blocks * block_size, kv_dim]
    std::vector<float> v_;  // [n_layer, n_blocks * block_size, kv_dim]
    BlockPool blocks_;
};

// The positions of one sequence and the blocks that hold them.
struct SequenceKv {
    std::vector<int32_t> block_table;
    int64_t n_tokens = 0;

    // Ensures blocks exist for positions [0, n_tokens + extra); false if the
    // cache ran out of blocks (nothing is allocated then).
    bool reserve(KvCache& cache, int64_t extra);
    // Drops this sequence's references to its blocks.
    void release(KvCache& cache);
};

}  // namespace tessera
