// The engine's internals (engine/engine.h's Impl): one class whose member
// functions are split by concept over engine.cpp (the loop, sampling,
// finishing) and engine_spec.cpp (speculative drafts). Internal to src/engine.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/prefix_pins.h"
#include "engine/choice.h"
#include "engine/engine.h"
#include "engine/kv_disk.h"
#include "engine/mask_worker.h"
#include "sched/scheduler.h"

namespace tessera {

// Forked choices share their sequence id; the sequence's address is unique
// among live ones, which is all a drafter's per-sequence state needs.
inline uint64_t draft_key(const Choice& c) { return reinterpret_cast<uintptr_t>(&c.seq); }

class Engine::Impl {
public:
    Impl(Model& model, const Tokenizer& tokenizer, EngineOptions options, std::unique_ptr<DiskTier> disk_tier);
    ~Impl();  // stops the thread

    Expected<std::shared_ptr<RequestHandle>> submit(GenerationRequest request);
    const Tokenizer& tokenizer() const { return tokenizer_; }
    const ModelConfig& config() const { return model_.config(); }
    const EngineOptions& options() const { return options_; }
    const EngineMetrics& metrics() const { return metrics_; }
    int64_t max_context() const { return max_context_; }
    const Expected<Pooling>& pooling() const { return pooling_; }
    bool model_damaged() const {
        const MappedFile* m = model_.gguf().mapping();
        return damaged_.load(std::memory_order_acquire) || (m != nullptr && m->damaged());
    }
    bool healthy(std::chrono::milliseconds stall) const;
    std::shared_ptr<const TokenVocabulary> grammar_vocabulary();  // thread-safe

private:
    void loop();
    void gather_burst(std::unique_lock<std::mutex>& lock);
    void take_incoming(std::deque<std::shared_ptr<RequestState>>& incoming);
    void start_request(std::shared_ptr<RequestState> state);
    void step();
    void handle_cancellations();
    void process_logits(Choice& choice, const float* logits);
    int32_t max_draft_for(const GenerationRequest& r) const;
    void verify_draft(Choice& choice, const ScheduledRun& run, const float* rows);
    void propose_drafts();
    void mark_pooled_rows(const Choice& choice, const BatchSequence& run);
    size_t pool_rows(Choice& choice, const BatchSequence& run, size_t row);
    void fork_siblings(Choice& leader, const float* logits);
    // `draft_q`, when given, is the distribution `draft` was drawn from
    // (a sampled draft): the token comes from the speculative rule.
    int32_t sample_token(Choice& choice, const float* logits, int32_t draft = -1, const float* draft_q = nullptr);
    void track(std::unique_ptr<Choice> choice);
    void on_token(Choice& choice, const float* logits, int32_t token);
    void emit(Choice& choice, std::string text);
    void finish(Choice& choice, FinishReason reason, const std::string& error = {});
    int64_t pin_prefix(const Choice& choice);
    void retire_done();
    bool fail_if_model_damaged();

    Model& model_;
    const Tokenizer& tokenizer_;
    EngineOptions options_;
    EngineMetrics metrics_;
    KvCache cache_;
    Scheduler scheduler_;
    PrefixPins pins_;  // after the scheduler: its references go before the prefix cache's
    std::unique_ptr<KvDiskOffload> disk_;  // --kv-disk; null: off. Before the scheduler goes: it observes its cache
    ThreadPool pool_;
    MaskWorker mask_worker_;
    std::vector<GrammarConstraint*> masks_ahead_;  // the step's masks the worker computes
    Expected<Pooling> pooling_;
    int64_t max_context_ = 0;
    double draft_token_cost_ = 0.0;  // a drafted token's cost next to a decode step (spec/draft_length.h)

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<RequestState>> incoming_;
    bool stop_ = false;
    uint64_t next_id_ = 1;

    std::atomic<int64_t> last_progress_ns_{0};
    std::atomic<bool> busy_{false};
    std::atomic<bool> damaged_{false};  // set once by the engine thread (model_damaged())
    std::list<std::unique_ptr<Choice>> choices_;  // engine thread only
    std::unordered_map<const Sequence*, Choice*> owner_;  // scheduler sequence -> its choice
    Batch batch_;
    std::vector<float> logits_;
    std::mutex grammar_vocab_mu_;
    std::shared_ptr<const TokenVocabulary> grammar_vocab_;  // built on the first constrained request
    std::vector<float> hidden_;  // [rows, n_embd] this step's pooled positions
    std::vector<Choice*> sampled_;              // choices that sampled this step, forks included
    std::vector<DraftRequest> draft_requests_;  // propose_drafts' scratch
    std::vector<int32_t> draft_run_;            // step's scratch: a run with its draft
    std::vector<std::vector<int32_t>> drafts_;  // propose_drafts' scratch
    std::vector<std::vector<float>> draft_probs_;  // propose_drafts' scratch: a sampling drafter's q
    std::thread thread_;
};

}  // namespace tessera
