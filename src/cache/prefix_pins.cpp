// Pinned prefixes: reference holding with deadlines (see prefix_pins.h).
#include "cache/prefix_pins.h"

#include <utility>

namespace tessera {

PrefixPins::PrefixPins(BlockPool& pool, int32_t max_blocks) : pool_(pool), max_blocks_(max_blocks) {}

PrefixPins::~PrefixPins() {
    for (const auto& [last, pin] : pins_) release(pin);
}

void PrefixPins::release(const Pin& pin) {
    for (int32_t b : pin.blocks) pool_.unref(b);
    n_blocks_ -= static_cast<int32_t>(pin.blocks.size());
}

bool PrefixPins::pin(std::vector<int32_t> blocks, Clock::time_point deadline) {
    if (blocks.empty()) return false;
    const auto it = pins_.find(blocks.back());
    if (it != pins_.end()) {  // already held: the newer request extends it
        if (deadline > it->second.deadline) it->second.deadline = deadline;
        for (int32_t b : blocks) pool_.unref(b);
        return true;
    }
    const auto n = static_cast<int32_t>(blocks.size());
    if (n > max_blocks_ - n_blocks_) {
        for (int32_t b : blocks) pool_.unref(b);
        return false;
    }
    n_blocks_ += n;
    const int32_t last = blocks.back();
    pins_.emplace(last, Pin{std::move(blocks), deadline});
    return true;
}

void PrefixPins::expire(Clock::time_point now) {
    for (auto it = pins_.begin(); it != pins_.end();) {
        if (it->second.deadline <= now) {
            release(it->second);
            it = pins_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace tessera
