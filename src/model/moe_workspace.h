// The activation buffers of a mixture-of-experts FFN (model/moe_ffn.h),
// part of ForwardWorkspace: sized for a pass of n tokens, each routed to k
// experts, so n * k "slots" (one per token-expert pair), grouped by expert.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "model/model_config.h"

namespace tessera {

// One pool thread's share of an expert-parallel step (model/moe_ffn.cpp):
// whole experts, run through a one-thread pool with their own matmul scratch.
struct ExpertLane {
    std::unique_ptr<ThreadPool> solo;
    std::vector<uint8_t> scratch;
    std::vector<int32_t> experts;
    int64_t rows = 0;
};

struct MoeWorkspace {
    std::vector<float> router_logits;   // [n, n_expert]
    std::vector<float> router_scratch;  // [2 * n_expert]
    std::vector<int32_t> expert_of;     // [n, k] each token's experts, best first
    std::vector<float> weight_of;       // [n, k] and their weights
    std::vector<int32_t> slot_of;       // [n, k] the row each pair has in the grouped buffers
    std::vector<int32_t> token_of;      // [n * k] the token of each slot
    std::vector<int32_t> first_slot;    // [n_expert + 1] expert e's slots: [first_slot[e], first_slot[e+1])
    std::vector<float> x;               // [n * k, n_embd] inputs gathered by expert
    std::vector<float> gate, up;        // [n * k, n_ff_exp] (also [n, n_ff_shexp] for the shared expert)
    std::vector<float> y;               // [n * k, n_embd] expert outputs, by slot
    std::vector<float> shexp_gate;      // [n] shared expert gate logits
    std::vector<ExpertLane> lanes;      // [pool threads], made on the first expert-parallel step
    std::vector<int32_t> by_rows;       // [n_expert] used experts, most rows first (lane planning)

    // Grows (never shrinks), as ForwardWorkspace does.
    void reserve(const ModelConfig& c, int64_t n) {
        const auto slots = static_cast<size_t>(n * c.n_expert_used);
        const auto un = static_cast<size_t>(n);
        router_logits.resize(std::max(router_logits.size(), un * c.n_expert));
        router_scratch.resize(2 * static_cast<size_t>(c.n_expert));
        expert_of.resize(std::max(expert_of.size(), slots));
        weight_of.resize(std::max(weight_of.size(), slots));
        slot_of.resize(std::max(slot_of.size(), slots));
        token_of.resize(std::max(token_of.size(), slots));
        first_slot.resize(static_cast<size_t>(c.n_expert) + 1);
        by_rows.reserve(static_cast<size_t>(c.n_expert));
        x.resize(std::max(x.size(), slots * c.n_embd));
        const size_t ff = std::max(slots * c.n_ff_exp, un * c.n_ff_shexp);
        gate.resize(std::max(gate.size(), ff));
        up.resize(std::max(up.size(), ff));
        y.resize(std::max(y.size(), std::max(slots, un) * c.n_embd));
        shexp_gate.resize(std::max(shexp_gate.size(), un));
    }
};

}  // namespace tessera
