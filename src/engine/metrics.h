// Serving metrics, written by the engine thread with relaxed atomics and read
// by the /metrics handler without locks.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace tessera {

// Fixed-bucket histogram of seconds; buckets are upper bounds (Prometheus "le").
class Histogram {
public:
    using Bounds = std::array<double, 14>;
    // Request latencies.
    static constexpr Bounds kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                              1.0,   2.5,  5.0,   10.0, 30.0, 60.0, 120.0};
    // Per-token CPU work (grammar masks, compiles): 10 us to 1 s.
    static constexpr Bounds kFastBounds = {1e-5,  2.5e-5, 5e-5, 1e-4,  2.5e-4, 5e-4, 1e-3,
                                           2.5e-3, 5e-3,  0.01, 0.025, 0.1,    0.25, 1.0};
    // Counts, not seconds (accepted draft tokens per verification).
    static constexpr Bounds kCountBounds = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32};

    explicit Histogram(const Bounds& bounds = kLatencyBounds) : bounds_(bounds) {}
    void observe(double seconds);  // or the count, with kCountBounds
    const Bounds& bounds() const { return bounds_; }
    uint64_t bucket_count(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }  // cumulative
    uint64_t count() const { return count_.load(std::memory_order_relaxed); }
    double sum() const { return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) * 1e-9; }

private:
    const Bounds& bounds_;  // one of the static tables above
    std::array<std::atomic<uint64_t>, std::tuple_size_v<Bounds>> buckets_{};
    std::atomic<uint64_t> count_{0};
    std::atomic<uint64_t> sum_ns_{0};  // nanoseconds: per-token observations are microseconds
};

struct EngineMetrics {
    Histogram ttft;              // submit -> first token
    Histogram inter_token;       // between consecutive tokens of one choice
    Histogram e2e_latency;       // submit -> final event
    std::atomic<int64_t> waiting{0};
    std::atomic<int64_t> running{0};
    std::atomic<int64_t> kv_blocks_used{0};
    std::atomic<int64_t> kv_blocks_total{0};
    // The sliding-window layers' own pool (EngineOptions::swa_full off); 0 when none.
    std::atomic<int64_t> kv_window_blocks_used{0};
    std::atomic<int64_t> kv_window_blocks_total{0};
    std::atomic<int64_t> kv_blocks_cached{0};      // held by the prefix cache alone (evictable)
    std::atomic<int64_t> kv_blocks_pinned{0};      // references held by cache pins (PrefixPins)
    std::atomic<int64_t> kv_pins{0};               // live cache pins
    std::atomic<int64_t> kv_slots_unfilled{0};     // BlockTables::unfilled
    std::atomic<int64_t> kv_block_size{0};         // tokens per block
    std::atomic<uint64_t> prefix_queries{0};       // prompt tokens looked up
    std::atomic<uint64_t> prefix_hit_tokens{0};    // of which served from cache
    // KV disk tier (--kv-disk; all zero without one): engine/kv_disk.h.
    std::atomic<uint64_t> kv_disk_stored{0};          // blocks written to the tier
    std::atomic<uint64_t> kv_disk_loaded{0};          // blocks read back instead of recomputed
    std::atomic<uint64_t> kv_disk_rejected{0};        // corrupt records dropped, never loaded
    std::atomic<uint64_t> kv_disk_files_rejected{0};  // foreign or damaged tier files started afresh
    std::atomic<uint64_t> kv_disk_write_errors{0};
    std::atomic<int64_t> kv_disk_blocks{0};           // blocks the tier holds now
    std::atomic<int64_t> kv_disk_bytes_used{0};
    std::atomic<int64_t> kv_disk_bytes_capacity{0};
    std::atomic<uint64_t> prompt_tokens{0};
    std::atomic<uint64_t> generated_tokens{0};
    std::atomic<uint64_t> preemptions{0};
    std::atomic<uint64_t> requests_finished{0};
    std::atomic<uint64_t> requests_rejected{0};
    std::atomic<uint64_t> steps{0};                // forward passes run
    // Structured output (grammar-constrained requests).
    std::atomic<uint64_t> constrained_requests{0};  // accepted by submit()
    Histogram grammar_compile{Histogram::kFastBounds};  // per request, as measured by its builder
    Histogram grammar_mask{Histogram::kFastBounds};     // per sampled token of a constrained choice
    // Jump-forward: tokens a grammar forced, proposed as drafts, and those
    // the model's own sampling confirmed (engine_spec.cpp).
    std::atomic<uint64_t> jump_forward_drafted_tokens{0};
    std::atomic<uint64_t> jump_forward_tokens{0};
    // Speculative decoding: the drafter's name() labels these ("none": off);
    // set before the engine thread starts, never changed.
    const char* spec_drafter = "none";
    std::atomic<uint64_t> spec_drafted_tokens{0};   // drafted tokens verified
    std::atomic<uint64_t> spec_accepted_tokens{0};  // of which the target accepted
    Histogram spec_accepted{Histogram::kCountBounds};  // accepted tokens per verified draft
};

}  // namespace tessera
