#include "model/moe_counters.h"

namespace tessera {

MoeCounters::MoeCounters(int32_t n_layer, int32_t n_expert)
    : n_layer_(n_layer), n_expert_(n_expert),
      tokens_(std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(n_layer) * n_expert)),
      passes_(std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(n_layer) * n_expert)) {}

uint64_t MoeCounters::expert_tokens(int32_t expert) const {
    uint64_t sum = 0;
    for (int32_t l = 0; l < n_layer_; ++l) sum += tokens(l, expert);
    return sum;
}

void MoeCounters::reset() {
    const size_t n = static_cast<size_t>(n_layer_) * static_cast<size_t>(n_expert_);
    for (size_t i = 0; i < n; ++i) {
        tokens_[i].store(0, std::memory_order_relaxed);
        passes_[i].store(0, std::memory_order_relaxed);
    }
}

}  // namespace tessera
