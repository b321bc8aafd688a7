// The scheduler's view of one sequence (one choice of one request): its
// tokens, how many of them have K/V in the cache, and the blocks holding it.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

enum class SeqStatus { Waiting, Running, Finished };

struct Sequence {
    uint64_t id = 0;
    uint64_t arrival = 0;              // FCFS order of the owning request
    std::vector<int32_t> tokens;       // prompt followed by generated tokens
    int64_t n_prompt = 0;
    int64_t n_computed = 0;            // leading tokens whose K/V is in the cache
    std::vector<int32_t> block_table;  // slot of each block_size run of positions (model/kv_cache.h)
    bool half_tail = false;            // the last entry is a half block
    // With a KV window pool: the slot of each block_size run in it (whole
    // blocks), -1 for runs that slid out of the window (freed). Mirrors
    // block_table's length.
    std::vector<int32_t> window_table;
    uint64_t cache_salt = 0;           // prefix-cache isolation domain
    // False when every position must be computed here (an embedding that pools
    // more than the last position): admission then matches no cached prefix.
    bool reuse_prefix = true;
    int64_t n_cached = 0;              // prompt tokens served by the prefix cache (first admission)
    bool admitted_once = false;
    SeqStatus status = SeqStatus::Waiting;
    // Speculative tokens proposed after tokens.back(), not verified: they run
    // with the next decode (ScheduledRun::n_draft) and are never cached.
    std::vector<int32_t> draft;

    int64_t n_uncomputed() const { return static_cast<int64_t>(tokens.size()) - n_computed; }
};

}  // namespace tessera
