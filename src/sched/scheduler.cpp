// Continuous-batching scheduler. Order of each step: running decodes first
// (so generation keeps flowing while long prompts prefill), then running
// prefill chunks, then FCFS admission of waiting sequences (holding back those
// whose prefix a running sequence is still computing). When blocks run
// out the prefix cache is evicted first, then the newest running sequence is
// preempted and later recomputed.
#include "sched/scheduler.h"

#include <algorithm>

#include "core/check.h"
#include "sched/prefill_sharing.h"

namespace tessera {

Scheduler::Scheduler(KvCache& cache, SchedulerOptions options)
    : cache_(cache), options_(options), prefix_(cache.blocks(), cache.block_size()),
      tables_(cache, [this] { return options_.prefix_cache && prefix_.evict(8) > 0; }) {}

Scheduler::~Scheduler() {
    for (Sequence* s : running_) release(*s);
    for (Sequence* s : waiting_) release(*s);
}

void Scheduler::add(Sequence* seq) {
    seq->status = SeqStatus::Waiting;
    waiting_.push_back(seq);
}

void Scheduler::add_running(Sequence* seq) {
    seq->status = SeqStatus::Running;
    running_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
    if (seq->status == SeqStatus::Running) {
        running_.remove(seq);
    } else if (seq->status == SeqStatus::Waiting) {
        waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), seq), waiting_.end());
    }
    release(*seq);
    seq->status = SeqStatus::Finished;
}

void Scheduler::release(Sequence& seq) {
    tables_.release(seq);
    seq.n_computed = 0;
}

void Scheduler::preempt(Sequence& seq) {
    running_.remove(&seq);
    release(seq);
    seq.status = SeqStatus::Waiting;
    waiting_.push_front(&seq);  // it arrived before everything still waiting
}

int64_t Scheduler::admit_prefix(Sequence& seq) {
    TS_CHECK_MSG(seq.block_table.empty(), "a waiting sequence holds no blocks");
    const auto n_lookup = static_cast<int64_t>(seq.tokens.size()) - 1;  // the last token must run for logits
    if (!options_.prefix_cache || n_lookup <= 0) return 0;
    PrefixCache::Match m = prefix_.match(std::span<const int32_t>(seq.tokens.data(), n_lookup), seq.cache_salt);
    seq.block_table.clear();
    for (int32_t b : m.blocks) seq.block_table.push_back(b * cache_.block_size());
    seq.half_tail = false;
    seq.n_computed = m.n_tokens;
    return m.n_tokens;
}

void Scheduler::note_admission(Sequence& seq, int64_t hit) {
    if (seq.admitted_once) return;
    seq.admitted_once = true;
    seq.n_cached = std::min(hit, seq.n_prompt);
    queried_tokens_ += static_cast<uint64_t>(seq.n_prompt);
    hit_tokens_ += static_cast<uint64_t>(seq.n_cached);
}

bool Scheduler::held_for_shared_prefill(const Sequence& seq) {
    if (!options_.prefix_cache || seq.tokens.size() < 2) return false;
    const std::span<const int32_t> lookup(seq.tokens.data(), seq.tokens.size() - 1);
    const int64_t pending = pending_shared_tokens(lookup, seq.cache_salt, running_, cache_.block_size());
    return pending > 0 && pending > prefix_.cached_tokens(lookup, seq.cache_salt);
}

ScheduleOutput Scheduler::schedule() {
    ScheduleOutput out;
    int64_t budget = options_.max_batch_tokens;
    auto schedule_running = [&](bool decode_pass) {
        for (auto it = running_.begin(); it != running_.end() && budget > 0;) {
            Sequence* seq = *it;
            const bool is_decode = seq->n_uncomputed() == 1;
            if (is_decode != decode_pass) {
                ++it;
                continue;
            }
            const int64_t n = std::min(seq->n_uncomputed(), budget);
            bool preempted_self = false;
            while (!ensure_blocks(*seq, n)) {
                Sequence* victim = running_.back();
                ++out.n_preempted;
                if (victim == seq) {
                    preempted_self = true;
                    break;
                }
                // A victim already scheduled this step gives its tokens back.
                for (auto r = out.runs.begin(); r != out.runs.end(); ++r) {
                    if (r->seq == victim) {
                        budget += r->n_tokens;
                        out.n_tokens -= r->n_tokens;
                        out.runs.erase(r);
                        break;
                    }
                }
                preempt(*victim);
            }
            if (preempted_self) {
                preempt(*seq);
                break;  // seq was the newest: nothing after it is left
            }
            out.runs.push_back({seq, static_cast<int32_t>(n), n == seq->n_uncomputed()});
            out.n_tokens += static_cast<int32_t>(n);
            budget -= n;
            ++it;
        }
    };
    schedule_running(true);
    schedule_running(false);

    // FCFS admission. A sequence held back for a prefix another one is still
    // computing keeps its place; those behind it may pass. Holds only point
    // at running sequences, which advance every step (or get preempted or
    // cancelled, which ends the hold), so nothing waits forever on them.
    for (auto it = waiting_.begin();
         it != waiting_.end() && budget > 0 && running_.size() < static_cast<size_t>(options_.max_seqs);) {
        Sequence* seq = *it;
        if (held_for_shared_prefill(*seq)) {
            ++it;
            continue;
        }
        const int64_t hit = admit_prefix(*seq);
        const int64_t n = std::min(seq->n_uncomputed(), budget);
        if (!ensure_blocks(*seq, n)) {
            release(*seq);  // keep nothing while waiting for memory
            break;
        }
        note_admission(*seq, hit);
        it = waiting_.erase(it);
        seq->status = SeqStatus::Running;
        running_.push_back(seq);
        out.runs.push_back({seq, static_cast<int32_t>(n), n == seq->n_uncomputed()});
        out.n_tokens += static_cast<int32_t>(n);
        budget -= n;
    }
    return out;
}

void Scheduler::commit(const ScheduleOutput& out) {
    const int bs = cache_.block_size();
    for (const ScheduledRun& r : out.runs) {
        const int64_t before = r.seq->n_computed;
        r.seq->n_computed += r.n_tokens;
        TS_CHECK(r.seq->n_computed <= static_cast<int64_t>(r.seq->tokens.size()));
        // Share every block as soon as it is computed, mid-prefill included:
        // sequences held back for this prefix are admitted as it lands.
        if (r.seq->n_computed / bs > before / bs) cache_blocks(*r.seq);
    }
}

void Scheduler::cache_blocks(const Sequence& seq) {
    if (!options_.prefix_cache) return;
    const int bs = cache_.block_size();
    const auto n_full = static_cast<size_t>(std::min<int64_t>(seq.n_computed, static_cast<int64_t>(seq.tokens.size())) / bs);
    if (n_full == 0) return;
    // Full runs are whole blocks (a half holds at most half a run).
    block_ids_.clear();
    for (size_t i = 0; i < n_full; ++i) block_ids_.push_back(seq.block_table[i] / bs);
    prefix_.insert(std::span<const int32_t>(seq.tokens.data(), n_full * bs), block_ids_, seq.cache_salt);
}

}  // namespace tessera
