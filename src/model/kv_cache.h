// KV storage in fixed-size blocks. Every layer keeps one pool of K blocks and
// one of V rows, addressed by slot (block * block_size + offset), each in its
// storage type (F32, F16, BF16 or Q8_0; rows are converted as they are
// written). V blocks are block_size rows; K blocks hold the same bytes
// transposed, keys in lanes (kv_type.h).
//
// A sequence owns a block table: entry i is the slot of its position
// i * block_size, so position p lives at slot table[p / block_size] +
// p % block_size. An entry is the start of a whole block, or (the last entry
// only, while its run is at most half a block long) the start of a half
// block (cache/block_pool.h).
//
// With a window pool (KvWindowPool), sliding-window layers store into blocks
// of a second, smaller pool instead, addressed by a second table per
// sequence (Sequence::window_table), so the blocks of positions that slid out
// of every window can be freed while the full-attention layers keep theirs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/block_pool.h"
#include "core/status.h"
#include "core/zero_pages.h"
#include "kernels/attention.h"
#include "kernels/convert_row.h"
#include "kernels/kv_rotation.h"
#include "tensor/kv_type.h"

namespace tessera {

// The sliding-window layers' own pool: `layers` marks them (one entry per
// layer, or empty: no window pool, every layer in the main pool).
struct KvWindowPool {
    std::vector<uint8_t> layers;
    int n_blocks = 0;
};

class KvCache {
public:
    // types must pass check_kv_types for head_dim (callers check user input).
    KvCache(int n_layer, int n_head_kv, int head_dim, int n_blocks, int block_size, KvTypes types = {},
            KvWindowPool window = {});

    // Bytes of K and V of one block across n_layer layers (KV memory budgets).
    static int64_t bytes_per_block(int n_layer, int kv_dim, int block_size, KvTypes types);

    int n_layer() const { return n_layer_; }
    int kv_dim() const { return kv_dim_; }
    int n_blocks() const { return n_blocks_; }
    // The window pool, when there is one: which layers store there (their
    // slots index window_blocks(), through Sequence::window_table).
    bool has_window_pool() const { return n_window_blocks_ > 0; }
    bool windowed(int layer) const { return has_window_pool() && window_layers_[static_cast<size_t>(layer)] != 0; }
    int n_window_blocks() const { return n_window_blocks_; }
    int block_size() const { return block_size_; }
    // Slots of a half block; 0 when block_size is odd (no halves then).
    int half_block() const { return block_size_ % 2 == 0 ? block_size_ / 2 : 0; }
    KvTypes types() const { return types_; }
    // Hadamard rotation block sizes of K (with q) and V (with the attention
    // output), 0 for none: rows are stored rotated when the type is
    // quantized (kernels/kv_rotation.h); the attention block rotates.
    int k_rotation() const { return k_rotation_; }
    int v_rotation() const { return v_rotation_; }

    // Converts one token's K and V rows ([kv_dim] floats each) into the
    // storage types at `slot` (block * block_size + offset, in the layer's
    // pool) of `layer`; the K row is scattered into its block's lanes.
    void store(int layer, int64_t slot, const float* k, const float* v);

    // The layer's pools for the attention kernels (block_table left null).
    PagedKv view(int layer) const;

    // Reference-counted allocation of whole blocks (shared blocks: prefix
    // cache, parallel choices).
    BlockPool& blocks() { return blocks_; }
    const BlockPool& blocks() const { return blocks_; }
    int free_blocks() const { return blocks_.n_free(); }
    // The window pool's blocks (no blocks without a window pool).
    BlockPool& window_blocks() { return window_blocks_; }
    const BlockPool& window_blocks() const { return window_blocks_; }

    // Copies the K/V of the n slots from `src` to the n slots from `dst`,
    // each run within one block (copy-on-write, widening a half block), in
    // every layer of the main pool, or with `window` of the window pool.
    void copy_slots(int64_t src, int64_t dst, int n, bool window = false);

    // One whole block's K and V of every layer as bytes (the disk tier's
    // payload): per layer, the K block as stored (keys in lanes) and then the
    // block's V rows. block_bytes() of them. Only without a window pool.
    int64_t block_bytes() const { return static_cast<int64_t>(n_layer_) * block_size_ * (k_row_bytes_ + v_row_bytes_); }
    void read_block(int32_t block, std::span<uint8_t> out) const;
    void write_block(int32_t block, std::span<const uint8_t> in);

private:
    // Slots of one layer in its pool.
    int64_t slots(int layer) const {
        return static_cast<int64_t>(windowed(layer) ? n_window_blocks_ : n_blocks_) * block_size_;
    }
    uint8_t* k_block(int layer, int64_t block) {
        return k_.data() + (first_slot_[static_cast<size_t>(layer)] + block * block_size_) * k_row_bytes_;
    }
    uint8_t* v_row(int layer, int64_t slot) {
        return v_.data() + (first_slot_[static_cast<size_t>(layer)] + slot) * v_row_bytes_;
    }
    const uint8_t* k_block(int layer, int64_t block) const { return const_cast<KvCache*>(this)->k_block(layer, block); }
    const uint8_t* v_row(int layer, int64_t slot) const { return const_cast<KvCache*>(this)->v_row(layer, slot); }

    int n_layer_, kv_dim_, n_blocks_, block_size_;
    int n_window_blocks_;
    std::vector<uint8_t> window_layers_;  // [n_layer] with a window pool
    std::vector<int64_t> first_slot_;     // [n_layer]: the layer's slot 0 in the storage below
    KvTypes types_;
    int k_rotation_, v_rotation_;
    ConvertRowFn convert_k_, convert_v_;  // F32 -> storage type, chosen once for this CPU
    int64_t k_row_bytes_, v_row_bytes_;  // one slot: kv_dim elements
    // Page-aligned (so the attention kernels' 64-byte loads never straddle
    // two cache lines) and resident only where written.
    // Per layer, its pool's blocks (main: n_blocks, window: n_window_blocks).
    ZeroPages k_;  // keys-in-lanes blocks of block_size * k_row_bytes_, + padding
    ZeroPages v_;  // rows of v_row_bytes_
    BlockPool blocks_;
    BlockPool window_blocks_;
};

}  // namespace tessera
