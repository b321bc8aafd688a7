// KV storage in fixed-size blocks. Every layer keeps one pool of K rows and
// one of V rows (F16), addressed by (block, slot); a sequence owns a block
// table that maps its positions to blocks. Today one sequence uses it; the
// paged, shared cache of the serving work builds on the same layout.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace tessera {

class KvCache {
public:
    KvCache(int n_layer, int kv_dim, int n_blocks, int block_size);

    int n_layer() const { return n_layer_; }
    int kv_dim() const { return kv_dim_; }
    int n_blocks() const { return n_blocks_; }
    int block_size() const { return block_size_; }

    // [n_blocks * block_size, kv_dim] F16 rows of one layer.
    uint16_t* k_pool(int layer) { return k_.data() + pool_offset(layer); }
    uint16_t* v_pool(int layer) { return v_.data() + pool_offset(layer); }
    const uint16_t* k_pool(int layer) const { return k_.data() + pool_offset(layer); }
    const uint16_t* v_pool(int layer) const { return v_.data() + pool_offset(layer); }

    // Free-list allocation of whole blocks.
    int free_blocks() const { return static_cast<int>(free_.size()); }
    int allocate_block();  // -1 when none is free
    void release_block(int block);

private:
    size_t pool_offset(int layer) const {
        return static_cast<size_t>(layer) * static_cast<size_t>(n_blocks_) * block_size_ * kv_dim_;
    }
    int n_layer_, kv_dim_, n_blocks_, block_size_;
    std::vector<uint16_t> k_;  // [n_layer, n_blocks * block_size, kv_dim]
    std::vector<uint16_t> v_;  // [n_layer, n_blocks * block_size, kv_dim]
    std::vector<int> free_;
};

// The positions of one sequence and the blocks that hold them.
struct SequenceKv {
    std::vector<int32_t> block_table;
    int64_t n_tokens = 0;

    // Ensures blocks exist for positions [0, n_tokens + extra); false if the
    // cache ran out of blocks (nothing is allocated then).
    bool reserve(KvCache& cache, int64_t extra);
    void release(KvCache& cache);
};

}  // namespace tessera
