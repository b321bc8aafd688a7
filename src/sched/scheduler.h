// Iteration-level scheduler (continuous batching). Each step packs the decode
// tokens of running sequences and chunks of waiting prompts under a token
// budget and a sequence cap, matching cached prefixes on admission (and
// waiting for a prefix another sequence is computing, prefill_sharing.h), and
// preempts the most recently admitted sequence (recompute later) when KV
// blocks run out. Prefill chunks share each step fairly (prefill_share), so a
// short prompt is not starved by a long one being prefilled. It owns the
// sequences' state (tokens aside, which the engine appends as it samples) and
// moves no K/V itself: its output says what runs and which slots to copy first.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <vector>

#include "cache/prefix_cache.h"
#include "sched/block_tables.h"
#include "sched/sequence.h"

namespace tessera {

struct SchedulerOptions {
    int32_t max_batch_tokens = 512;
    int32_t max_seqs = 64;
    bool prefix_cache = true;
    // Fair prefill: while several prompts prefill, the oldest gets up to this
    // many tokens of the step, then every other one up to as many, shortest
    // first; what is left goes to the shortest. So a short prompt's first
    // chunk runs in the next step whatever long prompts are being prefilled,
    // and the oldest prompt always progresses. 0: FCFS (the oldest prefill
    // may take the whole budget); -1: max_batch_tokens / 4.
    int32_t prefill_share = -1;
};

struct ScheduledRun {
    Sequence* seq;
    int32_t n_tokens;  // tokens[n_computed, n_computed + n_tokens - n_draft) run this step...
    bool logits;       // the run reaches the end of the sequence's tokens
    int32_t n_draft = 0;  // ...followed by seq->draft[0, n_draft), each with a logits row
};

// One step as plain data (the shape of vLLM v1's SchedulerOutput). Before the
// forward pass the engine applies `copies` in order (copy-on-write of runs
// shared by forks, half blocks widened); then each run computes its tokens
// into the slots its block table names. Blocks freed during schedule() need
// nothing from the engine: freeing is pool bookkeeping and the K/V left in
// them is overwritten before anyone reads it.
struct ScheduleOutput {
    std::vector<ScheduledRun> runs;
    std::vector<SlotCopy> copies;
    int32_t n_tokens = 0;
    int32_t n_preempted = 0;
};

// What a new sequence starts from.
struct NewSequence {
    uint64_t id = 0;  // also its FCFS arrival order
    std::vector<int32_t> prompt;
    uint64_t cache_salt = 0;  // prefix-cache isolation domain
    bool reuse_prefix = true;  // Sequence::reuse_prefix
};

class Scheduler {
public:
    // `pool` holds block ids of block_size slots each and must outlive the
    // scheduler, as must the window pool of sliding-window layers (if any:
    // each sequence then gets a window_table, whose runs behind the window
    // are freed as it advances).
    Scheduler(BlockPool& pool, int32_t block_size, SchedulerOptions options, WindowPool window = {});
    ~Scheduler();

    // Sets seq up from `init` and queues it at the back of the waiting queue.
    void add(Sequence* seq, NewSequence init);
    // Makes `child` a copy of the running `parent` (a parallel choice from
    // the same prompt) sharing its blocks, running behind the others; the
    // first write to a shared run copies it (ScheduleOutput::copies).
    void fork(const Sequence& parent, Sequence* child);
    // Appends a sampled token to a running sequence; the next schedule()
    // gives it a run of its own (decode).
    void append_token(Sequence* seq, int32_t token);
    // Proposes tokens to verify after the running seq's last token: its next
    // decode runs them too, as far as the step's budget allows.
    void set_draft(Sequence* seq, std::vector<int32_t> draft);
    // After the step that ran seq's draft, as the target accepts drafted
    // tokens (each appended first): the next n drafted positions hold valid
    // K/V and count as computed, and blocks they complete are cached. Called
    // token by token, so a sequence that ends mid-draft caches exactly what
    // plain decoding would have.
    void accept_drafted(Sequence* seq, int32_t n);
    // Once the target stopped accepting: the remaining drafted positions are
    // rolled back (blocks past the sequence's tokens are freed) and the draft
    // is cleared.
    void end_draft(Sequence* seq);
    // Removes a sequence wherever it is and drops its block references;
    // a prefill-complete prefix of it stays in the prefix cache.
    void remove(Sequence* seq);

    ScheduleOutput schedule();
    // After the forward pass: advances n_computed and caches every block the
    // step completed, so a prefix still being prefilled is shared block by block.
    // Drafted positions do not count until accept_drafted().
    void commit(const ScheduleOutput& out);

    size_t n_waiting() const { return waiting_.size(); }
    size_t n_running() const { return running_.size(); }
    bool idle() const { return waiting_.empty() && running_.empty(); }
    Sequence* front_waiting() const { return waiting_.empty() ? nullptr : waiting_.front(); }
    PrefixCache& prefix_cache() { return prefix_; }
    uint64_t prefix_queried_tokens() const { return queried_tokens_; }
    uint64_t prefix_hit_tokens() const { return hit_tokens_; }

    // Inserts the sequence's computed full blocks into the prefix cache.
    void cache_blocks(const Sequence& seq);
    // Allocated but empty KV slots (BlockTables::unfilled).
    int64_t unfilled_kv_slots() const { return tables_.unfilled(running_); }

private:
    struct Prefill {
        Sequence* seq;
        bool waiting;       // not admitted yet
        int64_t remaining;  // prompt tokens left to compute (before prefix matching)
    };

    int64_t share() const;
    void schedule_decodes(ScheduleOutput& out, int64_t& budget);
    void schedule_prefills(ScheduleOutput& out, int64_t& budget);
    size_t order_prefills();  // fills prefills_; returns the index of the one served first
    // Schedules n tokens of a running sequence, preempting the newest ones
    // for blocks; false when seq itself was the newest and got preempted.
    bool run_running(Sequence& seq, int64_t n, ScheduleOutput& out, int64_t& budget, int32_t n_draft = 0);
    int64_t fit_draft(Sequence& seq, int64_t budget, ScheduleOutput& out);  // seq's draft tokens to run now
    // Admits a waiting sequence with a first chunk of at most `cap`; false when
    // its blocks do not fit (it keeps nothing).
    bool admit(Sequence& seq, int64_t cap, ScheduleOutput& out, int64_t& budget);
    void top_up(ScheduleOutput& out, int64_t& budget);
    bool ensure_blocks(Sequence& seq, int64_t n_new, ScheduleOutput& out) {
        return tables_.ensure(seq, seq.n_computed + n_new, out.copies);
    }
    int64_t admit_prefix(Sequence& seq);  // returns the prompt tokens the cache served
    void note_admission(Sequence& seq, int64_t hit);
    bool held_for_shared_prefill(const Sequence& seq);
    void preempt(Sequence& seq);
    void release(Sequence& seq);

    int32_t block_size_;
    SchedulerOptions options_;
    PrefixCache prefix_;
    BlockTables tables_;
    std::deque<Sequence*> waiting_;
    std::list<Sequence*> running_;  // admission order, oldest first
    std::vector<int32_t> block_ids_;   // cache_blocks' scratch (grown, never shrunk)
    std::vector<int32_t> window_ids_;  // the same for the window pool
    std::vector<Prefill> prefills_;   // schedule's scratch (grown, never shrunk)
    uint64_t queried_tokens_ = 0;
    uint64_t hit_tokens_ = 0;
};

}  // namespace tessera
