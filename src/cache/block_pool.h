// Reference-counted ids of the fixed-size KV blocks every sequence and the
// prefix cache share. Bookkeeping only: the KV storage indexed by these ids
// lives in model/kv_cache.h. Single-threaded (engine thread), O(1) operations.
//
// A block is handed out whole, or split into two halves (half id h is half
// h % 2 of block h / 2) so that the short last run of a sequence holds half
// a block: the tail of a run is on average half a block of empty slots, and
// halves halve that waste. A split block is free again when both halves are;
// a free half whose mate is held is "stranded" and goes to the next half
// request before any whole block is split.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace tessera {

class BlockPool {
public:
    explicit BlockPool(int32_t n_blocks);

    // Called as a whole block gains a second holder (shared = true) or goes
    // back to one, so the prefix cache can count the blocks only it holds
    // without walking its tree (PrefixCache::evictable_blocks). One observer;
    // an empty function removes it.
    using ShareObserver = std::function<void(int32_t block, bool shared)>;
    void set_share_observer(ShareObserver observer) { observer_ = std::move(observer); }

    // A free block with ref count 1, or -1 when none is free. The most
    // recently freed block is handed out first.
    int32_t allocate();
    // Adds a holder to a whole block that is already held (ref count > 0).
    void ref(int32_t b);
    // Drops a holder; the block returns to the free list at ref count 0.
    void unref(int32_t b);
    // Holders of a whole block (0 when free).
    int32_t ref_count(int32_t b) const;

    // A free half with ref count 1 (a stranded one first, else the first half
    // of a freshly split block), or -1 when neither exists.
    int32_t allocate_half();
    void ref_half(int32_t h);
    void unref_half(int32_t h);
    int32_t half_ref_count(int32_t h) const;

    int32_t n_free() const { return static_cast<int32_t>(free_list_.size()); }
    int32_t n_stranded_halves() const { return static_cast<int32_t>(stranded_.size()); }
    int32_t n_blocks() const { return static_cast<int32_t>(state_.size()); }

private:
    enum class State : uint8_t { Free, Whole, Split };

    void check_id(int32_t b) const;
    void check_half(int32_t h) const;
    void strand(int32_t h);
    void unstrand(int32_t h);

    std::vector<State> state_;          // [n_blocks]
    std::vector<int32_t> ref_counts_;   // [2 * n_blocks]: a whole block counts in its first half
    std::vector<int32_t> free_list_;    // stack of free block ids
    std::vector<int32_t> stranded_;     // free halves of split blocks
    std::vector<int32_t> stranded_at_;  // [2 * n_blocks]: index in stranded_, or -1
    ShareObserver observer_;
};

}  // namespace tessera
