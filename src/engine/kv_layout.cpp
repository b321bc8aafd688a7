// KV cache layout (see kv_layout.h).
#include "engine/kv_layout.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tessera {

// The blocks of a -c context or a --kv-memory budget. Sliding-window layers
// get a pool of their own when it is smaller than the main one: a running
// sequence holds its window there, the tokens it runs this step (all
// sequences' together at most max_batch_tokens) and a partly filled run at
// each end. (A model whose every layer is windowed keeps one pool: there
// would be no main one to size.)
KvLayout kv_layout(const ModelConfig& c, const EngineOptions& o) {
    std::vector<uint8_t> windowed(static_cast<size_t>(c.n_layer));
    int n_windowed = 0;
    for (int l = 0; l < c.n_layer; ++l) n_windowed += windowed[static_cast<size_t>(l)] = c.is_local_layer(l) ? 1 : 0;
    const bool split = n_windowed > 0 && n_windowed < c.n_layer && !o.swa_full && o.kv_disk_dir.empty();
    const auto runs = [&](int64_t tokens) { return (tokens + o.block_size - 1) / o.block_size; };
    const int64_t n_window = std::max(1, o.max_seqs) * (runs(c.sliding_window) + 3) + runs(o.max_batch_tokens);
    const auto bytes = [&](int n_layer) { return KvCache::bytes_per_block(n_layer, c.kv_dim(), o.block_size, o.kv_types); };
    KvLayout l;
    if (o.kv_memory_bytes <= 0) {
        l.n_blocks = (o.ctx_size + o.block_size - 1) / o.block_size;
    } else {
        l.n_blocks = o.kv_memory_bytes / bytes(c.n_layer);
        if (split && n_window < l.n_blocks) {
            l.n_blocks = (o.kv_memory_bytes - n_window * bytes(n_windowed)) / bytes(c.n_layer - n_windowed);
        }
    }
    l.n_blocks = std::max<int64_t>(l.n_blocks, 1);
    if (split && n_window < l.n_blocks) l.window = KvWindowPool{std::move(windowed), static_cast<int>(n_window)};
    return l;
}

KvCache make_cache(const ModelConfig& c, const EngineOptions& o) {
    KvLayout l = kv_layout(c, o);
    return KvCache(c.n_layer, c.n_head_kv, c.head_dim, static_cast<int>(l.n_blocks), o.block_size, o.kv_types,
                   std::move(l.window));
}

WindowPool window_pool(KvCache& cache, const ModelConfig& c) {
    return cache.has_window_pool() ? WindowPool{&cache.window_blocks(), c.sliding_window} : WindowPool{};
}

}  // namespace tessera
