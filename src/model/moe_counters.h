// Per (layer, expert) counts of a mixture-of-experts model, kept by the
// forward pass: the tokens routed to each expert (what /metrics shows as
// expert usage) and the passes over each expert's weights (each pass reads
// the expert's gate, up and down matrices once, for all its tokens of the
// step). Relaxed atomics: the engine thread adds, a metrics reader may read
// at any time; counts only ever grow, except through reset() (tests).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace tessera {

class MoeCounters {
public:
    MoeCounters(int32_t n_layer, int32_t n_expert);

    int32_t n_layer() const { return n_layer_; }
    int32_t n_expert() const { return n_expert_; }

    // One pass over expert e's weights in layer l for n_tokens tokens.
    void record_pass(int32_t layer, int32_t expert, int64_t n_tokens) {
        const size_t i = index(layer, expert);
        tokens_[i].fetch_add(static_cast<uint64_t>(n_tokens), std::memory_order_relaxed);
        passes_[i].fetch_add(1, std::memory_order_relaxed);
    }
    uint64_t tokens(int32_t layer, int32_t expert) const {
        return tokens_[index(layer, expert)].load(std::memory_order_relaxed);
    }
    uint64_t weight_passes(int32_t layer, int32_t expert) const {
        return passes_[index(layer, expert)].load(std::memory_order_relaxed);
    }
    // Tokens routed to expert e, summed over layers.
    uint64_t expert_tokens(int32_t expert) const;
    void reset();

private:
    size_t index(int32_t layer, int32_t expert) const {
        return static_cast<size_t>(layer) * static_cast<size_t>(n_expert_) + static_cast<size_t>(expert);
    }

    int32_t n_layer_, n_expert_;
    std::unique_ptr<std::atomic<uint64_t>[]> tokens_, passes_;
};

}  // namespace tessera
