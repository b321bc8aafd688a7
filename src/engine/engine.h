// The serving engine: owns the model, the paged KV cache, the prefix cache and
// the scheduler, and runs the schedule -> forward -> sample -> stream loop on
// its own thread. Other threads only submit requests and read their handles.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "engine/metrics.h"
#include "engine/request.h"
#include "engine/request_handle.h"
#include "model/model.h"
#include "model/pooling.h"
#include "spec/drafter.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

class TokenVocabulary;

// Speculative decoding: drafts verified in the continuous batch (spec/drafter.h).
struct SpecOptions {
    std::shared_ptr<Drafter> drafter;  // null: off. Used on the engine thread only.
    int32_t max_draft = 8;             // tokens per draft (GenerationRequest::max_draft may lower it)
    // Fewest tokens per draft: 0 lets each choice's measured acceptance and
    // the drafter's cost decide, pausing where drafts do not pay (spec/draft_length.h).
    int32_t min_draft = 0;
    // Drafts stop once more sequences than this decode together: a full batch
    // is no longer bound by reading the weights, so verifying drafts would
    // cost real arithmetic and throughput at saturation would fall.
    int32_t max_batch = 8;
    // Jump-forward decoding: where a constrained choice's grammar forces the
    // next bytes, their tokens go out as a draft (any drafter or none), at
    // most this many a step; 0: off.
    int32_t max_forced = 32;
};

struct EngineOptions {
    int threads = 0;                  // 0: all cores
    int64_t kv_memory_bytes = 0;      // KV budget; 0: derive from ctx_size
    KvTypes kv_types{};               // K/V storage types (a budget holds more F16/Q8_0 tokens)
    int64_t ctx_size = 8192;          // total KV tokens when kv_memory_bytes == 0
    int block_size = 16;
    int32_t max_batch_tokens = 512;   // token budget per step
    int32_t prefill_share = -1;       // fair prefill chunk (SchedulerOptions); 0: FCFS, -1: budget / 4
    int32_t max_seqs = 64;            // running sequences per step
    int32_t max_waiting = 256;        // admission cap; past it submit() is refused
    int64_t max_context = 0;          // per-sequence limit; 0: model's n_ctx_train
    bool prefix_cache = true;
    // Share of the KV blocks that requests' cache pins (GenerationRequest::
    // cache_pin) may hold together; a pin past it is not made.
    double max_pinned_share = 0.5;
    // KV disk tier (engine/kv_disk.h): evicted prefix-cache blocks spill to a
    // file in this directory, at most kv_disk_bytes of it; empty: off.
    std::string kv_disk_dir{};
    uint64_t kv_disk_bytes = uint64_t{1} << 30;
    // Sliding-window layers (gemma2/3, gpt-oss) keep every position's K/V in
    // the main pool, as llama.cpp's --swa-full (and the KV disk tier, whose
    // records are whole blocks of every layer) does. Otherwise they get a
    // pool of their own, sized for max_seqs windows, and each sequence frees
    // its runs there as they slide out of its window.
    bool swa_full = false;
    std::optional<Pooling> pooling{}; // embeddings; unset: the model's (model_pooling)
    RequestLimits limits{};           // per-request caps (the server reads the same ones)
    SpecOptions spec{};
    // Grammar masks on a thread of their own while the forward pass runs
    // (engine/mask_worker.h). Auto: when the compute threads leave a core.
    enum class MaskThread { Auto, On, Off };
    MaskThread mask_thread = MaskThread::Auto;
};

class Engine {
public:
    // Starts the engine thread. The model and tokenizer must outlive the engine.
    static Expected<std::unique_ptr<Engine>> start(Model& model, const Tokenizer& tokenizer, EngineOptions options);
    ~Engine();  // stops the thread; unfinished requests end with FinishReason::Cancelled

    // Thread-safe. Errors, by Status::kind(): InvalidArgument (a malformed
    // request), LimitExceeded (over options().limits), Overloaded (the waiting
    // queue is full), Unavailable (shutting down, or the model file changed
    // on disk: model_damaged(); every later submit fails so, until a restart).
    Expected<std::shared_ptr<RequestHandle>> submit(GenerationRequest request);

    const Tokenizer& tokenizer() const;
    // The tokenizer's vocabulary as grammar masks walk it (built on first
    // use; thread-safe): a constraint's prebuilt tables must be over it.
    std::shared_ptr<const TokenVocabulary> grammar_vocabulary() const;
    const ModelConfig& model_config() const;
    const EngineOptions& options() const;
    const EngineMetrics& metrics() const;
    int64_t max_context() const;       // prompt + max_tokens must fit
    // How embedding requests are pooled; an error when the model's pooling
    // key is malformed or names no sentence pooling (submit refuses them so).
    Expected<Pooling> embedding_pooling() const;
    // False when the loop has work but made no progress for `stall`, or
    // when the model file is damaged or shorter than its mapping.
    bool healthy(std::chrono::milliseconds stall = std::chrono::seconds(30)) const;
    // True once the model file changed under the running engine (a read
    // faulted on a page the file lost, or a step found the file shorter):
    // the requests of that step and all running ones ended with
    // FinishReason::Error and Model::file_changed_message(); later submits
    // fail with that message. Sticky. Thread-safe, lock-free.
    bool model_damaged() const;

    class Impl;

private:
    explicit Engine(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
