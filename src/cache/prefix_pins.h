// Prompt caching with a time-to-live: a pin holds one reference on each block
// of a cached prefix until its deadline, so the prefix cache cannot evict it
// however busy the server gets. Block ids and times only; engine thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cache/block_pool.h"
#include "cache/prefix_cache.h"

namespace tessera {

class PrefixPins {
public:
    using Clock = std::chrono::steady_clock;

    // `max_blocks` caps the references all pins hold together, so pinned
    // prompts can never starve running requests of KV blocks. `cache` gave
    // the matches pinned and takes their references back; it must outlive
    // the pins.
    PrefixPins(PrefixCache& cache, int32_t max_blocks);
    ~PrefixPins();  // drops every pin's references
    PrefixPins(const PrefixPins&) = delete;
    PrefixPins& operator=(const PrefixPins&) = delete;

    // Keeps the blocks of `prefix` (a match, whose references the caller
    // hands over) until `deadline`. A prefix already pinned keeps its one set
    // of references and the later deadline. Returns false, dropping the
    // references, when the pin would take the total past max_blocks.
    bool pin(PrefixCache::Match prefix, Clock::time_point deadline);

    // Drops the pins whose deadline is at or before `now`.
    void expire(Clock::time_point now);

    int32_t n_blocks() const { return n_blocks_; }  // references held, shared blocks counted per pin
    size_t n_pins() const { return pins_.size(); }
    int32_t max_blocks() const { return max_blocks_; }

private:
    struct Pin {
        PrefixCache::Match prefix;
        Clock::time_point deadline;
    };
    PrefixCache& cache_;
    int32_t max_blocks_;
    int32_t n_blocks_ = 0;
    // Keyed by the prefix's last block: a held block stays in one place of
    // the prefix tree, so it names the whole run for as long as it is pinned.
    std::unordered_map<int32_t, Pin> pins_;
};

}  // namespace tessera
