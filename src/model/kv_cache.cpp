// Block pool bookkeeping for the KV cache, and conversion on store.
#include "model/kv_cache.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace tessera {

KvCache::KvCache(int n_layer, int n_head_kv, int head_dim, int n_blocks, int block_size, KvTypes types,
                 KvWindowPool window)
    : n_layer_(n_layer), kv_dim_(n_head_kv * head_dim), n_blocks_(n_blocks), block_size_(block_size),
      n_window_blocks_(window.layers.empty() ? 0 : window.n_blocks), window_layers_(std::move(window.layers)),
      types_(types), k_rotation_(k_rotation_size(types.k, head_dim)), v_rotation_(v_rotation_size(types.v, head_dim)),
      convert_k_(find_convert_row(types.k)), convert_v_(find_convert_row(types.v)),
      k_row_bytes_(kv_row_bytes(types.k, kv_dim_)), v_row_bytes_(kv_row_bytes(types.v, kv_dim_)),
      blocks_(n_blocks), window_blocks_(n_window_blocks_) {
    TS_CHECK(n_layer > 0 && n_head_kv > 0 && head_dim > 0 && n_blocks > 0 && block_size > 0);
    TS_CHECK(check_kv_types(types, head_dim).ok());
    TS_CHECK(window_layers_.empty() || (static_cast<int>(window_layers_.size()) == n_layer && n_window_blocks_ > 0));
    TS_CHECK_MSG(static_cast<int64_t>(std::max(n_blocks, n_window_blocks_)) * block_size <= INT32_MAX,
                 "KV cache slots must fit block table entries");
    int64_t total = 0;
    for (int l = 0; l < n_layer; ++l) {
        first_slot_.push_back(total);
        total += slots(l);
    }
    k_ = ZeroPages(static_cast<size_t>(total * k_row_bytes_ + kKeysInLanesPadBytes));
    v_ = ZeroPages(static_cast<size_t>(total * v_row_bytes_));
}

int64_t KvCache::bytes_per_block(int n_layer, int kv_dim, int block_size, KvTypes types) {
    return static_cast<int64_t>(n_layer) * block_size * (kv_row_bytes(types.k, kv_dim) + kv_row_bytes(types.v, kv_dim));
}

void KvCache::store(int layer, int64_t slot, const float* k, const float* v) {
    TS_CHECK(layer >= 0 && layer < n_layer_ && slot >= 0 && slot < slots(layer));
    // K converts a chunk at a time into a stack buffer, then scatters: 32
    // elements keep Q8_0 blocks whole.
    uint8_t* block = k_block(layer, slot / block_size_);
    const int key = static_cast<int>(slot % block_size_);
    uint8_t chunk[32 * 4];
    for (int e = 0; e < kv_dim_; e += 32) {
        const int n = std::min(32, kv_dim_ - e);
        convert_k_(k + e, chunk, n);
        scatter_k_row(types_.k, chunk, kv_row_bytes(types_.k, e), kv_row_bytes(types_.k, n), block_size_, key, block);
    }
    convert_v_(v, v_row(layer, slot), kv_dim_);
}

PagedKv KvCache::view(int layer) const {
    const int64_t first = first_slot_[static_cast<size_t>(layer)];
    return PagedKv{k_.data() + first * k_row_bytes_, v_.data() + first * v_row_bytes_, types_.k, types_.v,
                   k_row_bytes_, v_row_bytes_, nullptr, block_size_, kv_dim_};
}

void KvCache::copy_slots(int64_t src, int64_t dst, int n, bool window) {
    const int64_t bs = block_size_;
    TS_CHECK(!window || has_window_pool());
    const int64_t pool_slots = static_cast<int64_t>(window ? n_window_blocks_ : n_blocks_) * bs;
    TS_CHECK(n >= 0 && src >= 0 && dst >= 0 && src % bs + n <= bs && dst % bs + n <= bs && src + n <= pool_slots &&
             dst + n <= pool_slots);
    // K moves a key at a time, 32 elements at a time through a stack buffer
    // (Q8_0 blocks stay whole), as store() writes it.
    uint8_t chunk[32 * 4];
    for (int l = 0; l < n_layer_; ++l) {
        if (windowed(l) != window) continue;
        for (int j = 0; j < n; ++j) {
            for (int e = 0; e < kv_dim_; e += 32) {
                const int64_t x0 = kv_row_bytes(types_.k, e), bytes = kv_row_bytes(types_.k, std::min(32, kv_dim_ - e));
                gather_k_row(types_.k, k_block(l, src / bs), x0, bytes, block_size_, static_cast<int>(src % bs) + j,
                             chunk);
                scatter_k_row(types_.k, chunk, x0, bytes, block_size_, static_cast<int>(dst % bs) + j,
                              k_block(l, dst / bs));
            }
        }
        std::copy_n(v_row(l, src), n * v_row_bytes_, v_row(l, dst));
    }
}

void KvCache::read_block(int32_t block, std::span<uint8_t> out) const {
    TS_CHECK(!has_window_pool());
    TS_CHECK(block >= 0 && block < n_blocks_ && static_cast<int64_t>(out.size()) == block_bytes());
    const int64_t k_bytes = block_size_ * k_row_bytes_, v_bytes = block_size_ * v_row_bytes_;
    uint8_t* p = out.data();
    for (int l = 0; l < n_layer_; ++l) {
        p = std::copy_n(k_block(l, block), k_bytes, p);
        p = std::copy_n(v_row(l, static_cast<int64_t>(block) * block_size_), v_bytes, p);
    }
}

void KvCache::write_block(int32_t block, std::span<const uint8_t> in) {
    TS_CHECK(!has_window_pool());
    TS_CHECK(block >= 0 && block < n_blocks_ && static_cast<int64_t>(in.size()) == block_bytes());
    const int64_t k_bytes = block_size_ * k_row_bytes_, v_bytes = block_size_ * v_row_bytes_;
    const uint8_t* p = in.data();
    for (int l = 0; l < n_layer_; ++l) {
        std::copy_n(p, k_bytes, k_block(l, block));
        std::copy_n(p + k_bytes, v_bytes, v_row(l, static_cast<int64_t>(block) * block_size_));
        p += k_bytes + v_bytes;
    }
}

}  // namespace tessera
