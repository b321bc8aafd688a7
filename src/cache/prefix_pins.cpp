// Pinned prefixes: reference holding with deadlines (see prefix_pins.h).
#include "cache/prefix_pins.h"

#include <utility>

namespace tessera {

PrefixPins::PrefixPins(PrefixCache& cache, int32_t max_blocks) : cache_(cache), max_blocks_(max_blocks) {}

PrefixPins::~PrefixPins() {
    for (const auto& [last, pin] : pins_) {
        cache_.release(pin.prefix);
        n_blocks_ -= static_cast<int32_t>(pin.prefix.blocks.size());
    }
}

bool PrefixPins::pin(PrefixCache::Match prefix, Clock::time_point deadline) {
    if (prefix.blocks.empty()) return false;
    const auto it = pins_.find(prefix.blocks.back());
    if (it != pins_.end()) {  // already held: the newer request extends it
        if (deadline > it->second.deadline) it->second.deadline = deadline;
        cache_.release(prefix);
        return true;
    }
    const auto n = static_cast<int32_t>(prefix.blocks.size());
    if (n > max_blocks_ - n_blocks_) {
        cache_.release(prefix);
        return false;
    }
    n_blocks_ += n;
    const int32_t last = prefix.blocks.back();
    pins_.emplace(last, Pin{std::move(prefix), deadline});
    return true;
}

void PrefixPins::expire(Clock::time_point now) {
    for (auto it = pins_.begin(); it != pins_.end();) {
        if (it->second.deadline <= now) {
            cache_.release(it->second.prefix);
            n_blocks_ -= static_cast<int32_t>(it->second.prefix.blocks.size());
            it = pins_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace tessera
