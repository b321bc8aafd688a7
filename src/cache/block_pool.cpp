// BlockPool: a free-list stack plus one ref count per block. Misuse (bad id,
// double free, sharing a free block) is an engine bug and aborts via TS_CHECK.
#include "cache/block_pool.h"

#include "core/check.h"

namespace tessera {

BlockPool::BlockPool(int32_t n_blocks) {
    TS_CHECK(n_blocks >= 0);
    ref_counts_.assign(static_cast<size_t>(n_blocks), 0);
    free_list_.reserve(static_cast<size_t>(n_blocks));
    // Pushed in reverse so a fresh pool hands out 0, 1, 2, ...
    for (int32_t b = n_blocks - 1; b >= 0; --b) free_list_.push_back(b);
}

int32_t BlockPool::allocate() {
    if (free_list_.empty()) return -1;
    const int32_t b = free_list_.back();
    free_list_.pop_back();
    TS_CHECK(ref_counts_[static_cast<size_t>(b)] == 0);
    ref_counts_[static_cast<size_t>(b)] = 1;
    return b;
}

void BlockPool::ref(int32_t b) {
    check_id(b);
    int32_t& count = ref_counts_[static_cast<size_t>(b)];
    TS_CHECK_MSG(count > 0, "ref of a free block");
    ++count;
}

void BlockPool::unref(int32_t b) {
    check_id(b);
    int32_t& count = ref_counts_[static_cast<size_t>(b)];
    TS_CHECK_MSG(count > 0, "unref of a free block (double free)");
    if (--count == 0) free_list_.push_back(b);
}

int32_t BlockPool::ref_count(int32_t b) const {
    check_id(b);
    return ref_counts_[static_cast<size_t>(b)];
}

void BlockPool::check_id(int32_t b) const {
    TS_CHECK_MSG(b >= 0 && b < n_blocks(), "block id out of range");
}

}  // namespace tessera
