// Lock-free histogram updates.
#include "engine/metrics.h"

namespace tessera {

void Histogram::observe(double seconds) {
    for (size_t i = 0; i < bounds_.size(); ++i) {
        if (seconds <= bounds_[i]) buckets_[i].fetch_add(1, std::memory_order_relaxed);
    }
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<uint64_t>(seconds > 0 ? seconds * 1e9 : 0), std::memory_order_relaxed);
}

}  // namespace tessera
