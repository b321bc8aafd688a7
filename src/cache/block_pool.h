// Reference-counted ids of the fixed-size KV blocks every sequence and the
// prefix cache share. Bookkeeping only: the KV storage indexed by these ids
// lives in model/kv_cache.h. Single-threaded (engine thread), O(1) operations.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

class BlockPool {
public:
    explicit BlockPool(int32_t n_blocks);

    // A free block with ref count 1, or -1 when none is free. The most
    // recently freed block is handed out first.
    int32_t allocate();
    // Adds a holder to a block that is already held (ref count > 0).
    void ref(int32_t b);
    // Drops a holder; the block returns to the free list at ref count 0.
    void unref(int32_t b);

    int32_t ref_count(int32_t b) const;
    int32_t n_free() const { return static_cast<int32_t>(free_list_.size()); }
    int32_t n_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }

private:
    void check_id(int32_t b) const;

    std::vector<int32_t> ref_counts_;  // [n_blocks]
    std::vector<int32_t> free_list_;   // stack of free block ids
};

}  // namespace tessera
