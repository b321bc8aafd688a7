// The engine's side of the KV disk tier (cache/disk_tier.h): it moves block
// bytes between the KV storage and the tier. Blocks the RAM prefix cache
// evicts are written out as they go; a new prompt's blocks past what RAM
// holds are read back into fresh blocks and put in the prefix cache before
// the sequence is admitted, so its prefill starts after them; at shutdown
// the whole RAM cache is written out, so a restart finds it. Engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/disk_tier.h"
#include "cache/prefix_cache.h"
#include "core/status.h"
#include "engine/metrics.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace tessera {

// Opens the tier in `dir` for this model, KV types and block size.
Expected<std::unique_ptr<DiskTier>> open_kv_disk(const Model& model, const std::string& dir, uint64_t size_bytes,
                                                 KvTypes types, int block_size, int64_t block_bytes);

class KvDiskOffload {
public:
    // Becomes `prefix`'s evict observer while it lives; kv and prefix must outlive it.
    KvDiskOffload(std::unique_ptr<DiskTier> tier, KvCache& kv, PrefixCache& prefix);
    ~KvDiskOffload();
    KvDiskOffload(const KvDiskOffload&) = delete;
    KvDiskOffload& operator=(const KvDiskOffload&) = delete;

    // Loads the blocks of `tokens` (the part of a prompt admission may match)
    // that follow the RAM cache's match and are on disk, into free or
    // evictable blocks, and inserts them into the prefix cache. Returns how
    // many blocks it loaded.
    int32_t promote(std::span<const int32_t> tokens, uint64_t salt);
    // Writes out every block the prefix cache alone holds (shutdown).
    void flush();
    void publish(EngineMetrics& m) const;

private:
    void spill(const PrefixKey& key, std::span<const int32_t> run, int32_t block);
    int32_t allocate_block();

    std::unique_ptr<DiskTier> tier_;
    KvCache& kv_;
    PrefixCache& prefix_;
    std::vector<uint8_t> bytes_;      // one block's K/V, spill's scratch
    std::vector<PrefixKey> keys_;     // promote's scratch
    std::vector<int32_t> blocks_;     // promote's scratch
};

}  // namespace tessera
