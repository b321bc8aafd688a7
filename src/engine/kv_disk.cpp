// KvDiskOffload: the tier's identity (model fingerprint, KV types, block
// layout), spill on eviction, promotion before admission, flush at shutdown.
#include "engine/kv_disk.h"

#include <limits>

#include "core/content_hash.h"
#include "gguf/gguf_fingerprint.h"

namespace tessera {

Expected<std::unique_ptr<DiskTier>> open_kv_disk(const Model& model, const std::string& dir, uint64_t size_bytes,
                                                 KvTypes types, int block_size, int64_t block_bytes) {
    const std::array<uint64_t, 2> fp = gguf_fingerprint(model.gguf());
    const uint64_t fields[] = {fp[0], fp[1], static_cast<uint64_t>(types.k), static_cast<uint64_t>(types.v),
                               static_cast<uint64_t>(block_size), static_cast<uint64_t>(block_bytes)};
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(fields), sizeof(fields));
    const TierIdentity id{hash_bytes(bytes, 1), hash_bytes(bytes, 2)};
    const TierLayout layout{static_cast<uint32_t>(block_size), static_cast<uint64_t>(block_bytes)};
    return DiskTier::open(dir, id, layout, size_bytes);
}

KvDiskOffload::KvDiskOffload(std::unique_ptr<DiskTier> tier, KvCache& kv, PrefixCache& prefix)
    : tier_(std::move(tier)), kv_(kv), prefix_(prefix), bytes_(static_cast<size_t>(kv.block_bytes())) {
    prefix_.set_evict_observer(
        [this](const PrefixKey& key, std::span<const int32_t> run, int32_t block) { spill(key, run, block); });
}

KvDiskOffload::~KvDiskOffload() { prefix_.set_evict_observer(nullptr); }

void KvDiskOffload::spill(const PrefixKey& key, std::span<const int32_t> run, int32_t block) {
    if (tier_->contains(key)) {
        tier_->touch(key);  // it came from disk, or was written before: still there
        return;
    }
    kv_.read_block(block, bytes_);
    tier_->store(key, run, bytes_);
}

// A whole block from the free list, or one the prefix cache gives up (which
// spills it); -1 when neither exists.
int32_t KvDiskOffload::allocate_block() {
    int32_t b = kv_.blocks().allocate();
    while (b < 0 && prefix_.evict(1) > 0) b = kv_.blocks().allocate();
    return b;
}

// The RAM match is held (referenced) while the rest loads, so the evictions
// that make room cannot take it; the chain's disk records are touched first,
// so the spills those evictions cause do not push them out either.
int32_t KvDiskOffload::promote(std::span<const int32_t> tokens, uint64_t salt) {
    const auto bs = static_cast<size_t>(prefix_.block_size());
    const size_t n_full = tokens.size() / bs;
    PrefixCache::Match held = prefix_.match(tokens, salt);
    blocks_ = std::move(held.blocks);
    PrefixKey key = prefix_root_key(salt);
    for (size_t i = 0; i < blocks_.size(); ++i) key = prefix_chain_key(key, tokens.subspan(i * bs, bs));
    keys_.clear();
    for (size_t i = blocks_.size(); i < n_full; ++i) {
        key = prefix_chain_key(key, tokens.subspan(i * bs, bs));
        if (!tier_->contains(key)) break;
        tier_->touch(key);
        keys_.push_back(key);
    }
    int32_t loaded = 0;
    for (const PrefixKey& k : keys_) {
        const int32_t block = allocate_block();
        if (block < 0) break;
        const std::span<const uint8_t> kv = tier_->load(k, tokens.subspan(blocks_.size() * bs, bs));
        if (kv.empty()) {
            kv_.blocks().unref(block);
            break;
        }
        kv_.write_block(block, kv);
        blocks_.push_back(block);
        ++loaded;
    }
    if (loaded > 0) prefix_.insert(tokens.first(blocks_.size() * bs), blocks_, salt);
    for (int32_t b : blocks_) kv_.blocks().unref(b);
    return loaded;
}

void KvDiskOffload::flush() { prefix_.evict(std::numeric_limits<int32_t>::max()); }

void KvDiskOffload::publish(EngineMetrics& m) const {
    const DiskTierStats& s = tier_->stats();
    m.kv_disk_stored = s.stored;
    m.kv_disk_loaded = s.loaded;
    m.kv_disk_rejected = s.rejected;
    m.kv_disk_files_rejected = s.files_rejected;
    m.kv_disk_write_errors = s.write_errors;
    m.kv_disk_blocks = tier_->n_blocks();
    m.kv_disk_bytes_used = static_cast<int64_t>(tier_->bytes_used());
    m.kv_disk_bytes_capacity = tier_->capacity() * static_cast<int64_t>(tier_->layout().record_bytes());
}

}  // namespace tessera
