// How the engine's KV cache is laid out: the main pool's blocks for a -c
// context or a --kv-memory budget, and the sliding-window layers' own pool
// (model/kv_cache.h KvWindowPool) where that is smaller than the main one.
#pragma once

#include <cstdint>

#include "cache/prefix_cache.h"
#include "engine/engine.h"
#include "model/kv_cache.h"
#include "model/model_config.h"

namespace tessera {

struct KvLayout {
    int64_t n_blocks = 1;  // the main pool's
    KvWindowPool window;   // no layers: none
};

KvLayout kv_layout(const ModelConfig& c, const EngineOptions& o);
KvCache make_cache(const ModelConfig& c, const EngineOptions& o);
// The scheduler's view of the cache's window pool (none: an empty WindowPool).
WindowPool window_pool(KvCache& cache, const ModelConfig& c);

}  // namespace tessera
