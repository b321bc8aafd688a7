// The disk tier of the prefix cache (a hierarchical KV cache, as LMCache and
// SGLang's HiCache): blocks the RAM cache evicts are written to one file per
// model identity in a directory, bounded in size, least recently used out
// first, and read back on a later prefix hit or after a restart. Speaks keys,
// token runs and bytes; what the bytes mean is the engine's business.
// Engine thread only.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/disk_tier_format.h"
#include "cache/prefix_key.h"
#include "core/status.h"

namespace tessera {

struct DiskTierStats {
    uint64_t stored = 0;          // blocks written
    uint64_t loaded = 0;          // blocks read back, checksum and token run verified
    uint64_t rejected = 0;        // records dropped as corrupt (bad header at open, bad checksum at load)
    uint64_t files_rejected = 0;  // tier files replaced at open: foreign (another model, KV type, version) or damaged
    uint64_t write_errors = 0;    // stores that failed (disk full, I/O error): the block is simply not kept
};

class DiskTier {
public:
    // Opens DIR/kv-<identity>.tier (creating DIR and the file as needed),
    // sized to hold as many records as fit in `size_bytes`, and rebuilds the
    // index from the records already there. A file whose header is foreign
    // or damaged is started afresh (counted). Fails when DIR cannot be used,
    // another process holds the file, or no record fits in size_bytes.
    static Expected<std::unique_ptr<DiskTier>> open(const std::string& dir, const TierIdentity& id,
                                                    const TierLayout& layout, uint64_t size_bytes);
    ~DiskTier();
    DiskTier(const DiskTier&) = delete;
    DiskTier& operator=(const DiskTier&) = delete;

    bool contains(const PrefixKey& key) const { return index_.count(key) != 0; }
    // Marks a stored block most recently used (a lookup that will load it).
    void touch(const PrefixKey& key);
    // The KV bytes stored under `key` (valid until the next call), after
    // checking the record's header, that it holds exactly `run`, and its
    // checksum; empty when absent or corrupt (a corrupt record is dropped
    // and counted).
    std::span<const uint8_t> load(const PrefixKey& key, std::span<const int32_t> run);
    // Stores a block's run and KV bytes (block_bytes of them) under `key`,
    // evicting the least recently used record when full. A key already
    // stored is only touched. False when the write failed.
    bool store(const PrefixKey& key, std::span<const int32_t> run, std::span<const uint8_t> kv);

    const DiskTierStats& stats() const { return stats_; }
    int64_t n_blocks() const { return static_cast<int64_t>(index_.size()); }
    int64_t capacity() const { return static_cast<int64_t>(slots_.size()); }
    uint64_t bytes_used() const { return static_cast<uint64_t>(n_blocks()) * layout_.record_bytes(); }
    const std::string& path() const { return path_; }
    const TierLayout& layout() const { return layout_; }

private:
    struct Slot {
        PrefixKey key;
        uint64_t stamp = 0;
        bool used = false;
        std::list<int32_t>::iterator lru;
    };

    DiskTier(int fd, std::string path, const TierLayout& layout, int64_t n_slots);
    Status start(const TierIdentity& id, uint64_t file_bytes);
    void rebuild_index();
    void index_record(int32_t slot, const RecordHeader& h);
    void drop(int32_t slot);
    void clear_header(int32_t slot);
    void forget(int32_t slot);
    int32_t take_slot();
    uint64_t offset_of(int32_t slot) const { return kTierHeaderBytes + static_cast<uint64_t>(slot) * layout_.record_bytes(); }

    int fd_;
    std::string path_;
    TierLayout layout_;
    std::vector<Slot> slots_;
    std::unordered_map<PrefixKey, int32_t, PrefixKeyHash> index_;
    std::list<int32_t> lru_;  // used slots, least recently used first
    std::vector<int32_t> free_;
    std::vector<uint8_t> scratch_;  // one record
    uint64_t next_stamp_ = 1;
    DiskTierStats stats_;
};

}  // namespace tessera
