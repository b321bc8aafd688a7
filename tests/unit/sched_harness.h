// A Scheduler driven without a model or K/V storage (a bare BlockPool), the
// way the engine drives it, for the sched_* tests: schedule, "forward" (nothing), commit, then one generated
// token per run that reached its end.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sched/scheduler.h"

namespace tessera {

constexpr int kBlock = 16;
using Tokens = std::vector<int32_t>;

inline Tokens prefix_then(int32_t n_prefix, int32_t n_suffix, int32_t suffix_seed) {
    Tokens t;
    for (int32_t i = 0; i < n_prefix; ++i) t.push_back(1 + i % 97);
    for (int32_t i = 0; i < n_suffix; ++i) t.push_back(1000 + suffix_seed * 131 + i);
    return t;
}

// A sequence that has its tokens finishes (caches its blocks, leaves the
// scheduler).
class Harness {
public:
    Harness(int n_blocks, SchedulerOptions o) : pool_(n_blocks), sched_(pool_, kBlock, o) {}

    Sequence& submit(Tokens prompt, int32_t max_new, uint64_t salt = 0) {
        Sequence& s = seqs_.emplace_back();
        max_new_.push_back(max_new);
        sched_.add(&s, NewSequence{max_new_.size(), std::move(prompt), salt});
        return s;
    }

    // A parallel choice of the running `parent` (same request, same limit).
    Sequence& fork(const Sequence& parent) {
        Sequence& s = seqs_.emplace_back();
        sched_.fork(parent, &s);
        return s;
    }

    ScheduleOutput step() {
        ScheduleOutput out = sched_.schedule();
        for (const ScheduledRun& r : out.runs) {
            if (r.seq->n_computed < r.seq->n_prompt) prefill_tokens_ += r.n_tokens;
        }
        sched_.commit(out);
        for (const ScheduledRun& r : out.runs) {
            if (!r.logits) continue;
            Sequence& s = *r.seq;
            s.tokens.push_back(7);
            if (static_cast<int64_t>(s.tokens.size()) - s.n_prompt >= max_new_[s.id - 1]) finish(s);
        }
        ++steps_;
        preempted_ += out.n_preempted;
        return out;
    }

    void finish(Sequence& s) {
        sched_.cache_blocks(s);
        sched_.remove(&s);
    }

    // Runs until idle; false if it took more than `max_steps`.
    bool drain(int max_steps) {
        while (!sched_.idle()) {
            if (steps_ >= max_steps) return false;
            step();
        }
        return true;
    }

    bool blocks_all_back() {
        sched_.prefix_cache().clear();
        return pool_.n_free() == pool_.n_blocks();
    }

    Scheduler& sched() { return sched_; }
    BlockPool& pool() { return pool_; }
    int64_t prefill_tokens() const { return prefill_tokens_; }
    int64_t preempted() const { return preempted_; }

private:
    BlockPool pool_;  // block ids only: no K/V storage
    Scheduler sched_;
    std::deque<Sequence> seqs_;  // stable addresses
    std::vector<int32_t> max_new_;  // by request id - 1
    int64_t prefill_tokens_ = 0;  // tokens of runs that started inside a prompt
    int64_t preempted_ = 0;
    int steps_ = 0;
};

}  // namespace tessera
