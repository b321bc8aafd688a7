// Continuous-batching scheduler. Order of each step: running decodes first
// (so generation keeps flowing while long prompts prefill), then prefill
// chunks of running and waiting prompts -- FCFS, or with prefill_share the
// oldest first and then the shortest, each up to the share, the rest of the
// budget topping them up -- holding back waiting ones whose prefix a running
// sequence is still computing. When blocks run out the prefix cache is
// evicted first, then the newest running sequence is preempted and later
// recomputed.
#include "sched/scheduler.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "sched/prefill_sharing.h"

namespace tessera {

namespace {

// Window blocks the cache gives up at once: each call scans the cache
// (PrefixCache::evict_window), so a big pool frees several per scan; a small
// one frees one, as every block it keeps may end a later match.
int32_t window_evict_batch(const WindowPool& window) {
    return window.pool == nullptr ? 0 : std::clamp(window.pool->n_blocks() / 64, 1, 32);
}

}  // namespace

Scheduler::Scheduler(BlockPool& pool, int32_t block_size, SchedulerOptions options, WindowPool window)
    : block_size_(block_size), options_(options), prefix_(pool, block_size, default_block_hash, window),
      tables_(
          pool, block_size,
          [this, window_batch = window_evict_batch(window)](bool in_window) {
              return options_.prefix_cache && (in_window ? prefix_.evict_window(window_batch) : prefix_.evict(8)) > 0;
          },
          window) {}

Scheduler::~Scheduler() {
    for (Sequence* s : running_) release(*s);
    for (Sequence* s : waiting_) release(*s);
}

void Scheduler::add(Sequence* seq, NewSequence init) {
    *seq = Sequence{};
    seq->id = init.id;
    seq->arrival = init.id;
    seq->tokens = std::move(init.prompt);
    seq->n_prompt = static_cast<int64_t>(seq->tokens.size());
    seq->cache_salt = init.cache_salt;
    seq->reuse_prefix = init.reuse_prefix;
    seq->status = SeqStatus::Waiting;
    waiting_.push_back(seq);
}

void Scheduler::fork(const Sequence& parent, Sequence* child) {
    TS_CHECK_MSG(parent.status == SeqStatus::Running, "only a running sequence forks");
    *child = parent;
    tables_.share(*child);
    running_.push_back(child);
}

void Scheduler::append_token(Sequence* seq, int32_t token) {
    TS_CHECK_MSG(seq->status == SeqStatus::Running, "only a running sequence grows");
    seq->tokens.push_back(token);
}

void Scheduler::set_draft(Sequence* seq, std::vector<int32_t> draft) {
    TS_CHECK_MSG(seq->status == SeqStatus::Running, "only a running sequence drafts");
    seq->draft = std::move(draft);
}

void Scheduler::accept_drafted(Sequence* seq, int32_t n) {
    if (seq->status != SeqStatus::Running) return;  // it finished while its draft was checked
    const int64_t before = seq->n_computed;
    seq->n_computed += n;
    TS_CHECK(n >= 0 && static_cast<size_t>(n) <= seq->draft.size());
    TS_CHECK(seq->n_computed <= static_cast<int64_t>(seq->tokens.size()));
    if (seq->n_computed / block_size_ > before / block_size_) cache_blocks(*seq);
    tables_.slide(*seq);
}

void Scheduler::end_draft(Sequence* seq) {
    seq->draft.clear();
    if (seq->status != SeqStatus::Running) return;
    tables_.truncate(*seq, static_cast<int64_t>(seq->tokens.size()));
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
    seq.draft.clear();
    release(seq);
    seq.status = SeqStatus::Waiting;
    waiting_.push_front(&seq);  // it arrived before everything still waiting
}

int64_t Scheduler::admit_prefix(Sequence& seq) {
    TS_CHECK_MSG(seq.block_table.empty(), "a waiting sequence holds no blocks");
    const auto n_lookup = static_cast<int64_t>(seq.tokens.size()) - 1;  // the last token must run for logits
    if (!options_.prefix_cache || !seq.reuse_prefix || n_lookup <= 0) return 0;
    PrefixCache::Match m = prefix_.match(std::span<const int32_t>(seq.tokens.data(), n_lookup), seq.cache_salt);
    seq.block_table.clear();
    for (int32_t b : m.blocks) seq.block_table.push_back(b * block_size_);
    seq.half_tail = false;
    seq.window_table.clear();
    for (int32_t b : m.window_blocks) seq.window_table.push_back(b < 0 ? -1 : b * block_size_);
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
    if (!options_.prefix_cache || !seq.reuse_prefix || seq.tokens.size() < 2) return false;
    const std::span<const int32_t> lookup(seq.tokens.data(), seq.tokens.size() - 1);
    const int64_t pending = pending_shared_tokens(lookup, seq.cache_salt, running_, block_size_);
    return pending > 0 && pending > prefix_.cached_tokens(lookup, seq.cache_salt);
}

int64_t Scheduler::share() const {
    if (options_.prefill_share >= 0) return options_.prefill_share;
    return std::max<int64_t>(1, options_.max_batch_tokens / 4);
}

ScheduleOutput Scheduler::schedule() {
    ScheduleOutput out;
    int64_t budget = options_.max_batch_tokens;
    schedule_decodes(out, budget);
    schedule_prefills(out, budget);
    return out;
}

bool Scheduler::run_running(Sequence& seq, int64_t n, ScheduleOutput& out, int64_t& budget, int32_t n_draft) {
    while (!ensure_blocks(seq, n, out)) {
        Sequence* victim = running_.back();
        ++out.n_preempted;
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
        if (victim == &seq) return false;
    }
    out.runs.push_back({&seq, static_cast<int32_t>(n), n - n_draft == seq.n_uncomputed(), n_draft});
    out.n_tokens += static_cast<int32_t>(n);
    budget -= n;
    return true;
}

void Scheduler::schedule_decodes(ScheduleOutput& out, int64_t& budget) {
    for (auto it = running_.begin(); it != running_.end() && budget > 0;) {
        Sequence* seq = *it;
        if (seq->n_uncomputed() == 1) {
            const int64_t n_draft = fit_draft(*seq, budget, out);
            if (!run_running(*seq, 1 + n_draft, out, budget, static_cast<int32_t>(n_draft))) break;  // seq was the newest
        }
        ++it;  // preemption only removes the newest, never seq or those before it
    }
}

// A draft runs only with budget and free (or evictable) blocks to spare: it
// is cut to fit, and nobody is preempted for it.
int64_t Scheduler::fit_draft(Sequence& seq, int64_t budget, ScheduleOutput& out) {
    if (seq.draft.empty()) return 0;
    const auto n = static_cast<size_t>(std::clamp<int64_t>(budget - 1, 0, static_cast<int64_t>(seq.draft.size())));
    seq.draft.resize(n);
    if (n > 0 && !ensure_blocks(seq, 1 + static_cast<int64_t>(n), out)) {
        tables_.truncate(seq, seq.n_computed + 1);
        seq.draft.clear();
    }
    return static_cast<int64_t>(seq.draft.size());
}

size_t Scheduler::order_prefills() {
    prefills_.clear();
    for (Sequence* s : running_) {
        if (s->n_uncomputed() != 1) prefills_.push_back({s, false, s->n_uncomputed()});
    }
    for (Sequence* s : waiting_) prefills_.push_back({s, true, static_cast<int64_t>(s->tokens.size())});
    if (share() == 0 || prefills_.empty()) return 0;  // FCFS: running by admission, then waiting
    // Shortest first (FCFS among equals); the oldest arrival is served first.
    std::stable_sort(prefills_.begin(), prefills_.end(),
                     [](const Prefill& a, const Prefill& b) { return a.remaining < b.remaining; });
    size_t oldest = 0;
    for (size_t i = 1; i < prefills_.size(); ++i) {
        if (prefills_[i].seq->arrival < prefills_[oldest].seq->arrival) oldest = i;
    }
    return oldest;
}

void Scheduler::schedule_prefills(ScheduleOutput& out, int64_t& budget) {
    const size_t first = order_prefills();
    const int64_t cap = share() > 0 ? share() : budget;
    // A sequence held back for a prefix another one is still computing keeps
    // its place; the others may pass. Holds only point at running sequences,
    // which advance every step (or get preempted or cancelled, which ends
    // the hold), so nothing waits forever on them. Admission stops at the
    // first sequence that does not fit and after any preemption: memory is
    // short, and a sequence admitted now would only be preempted again.
    bool admitting = out.n_preempted == 0;
    for (size_t k = 0; k < prefills_.size() && budget > 0; ++k) {
        const size_t i = k == 0 ? first : (k <= first ? k - 1 : k);  // `first`, then the rest in order
        Sequence& seq = *prefills_[i].seq;
        if (!prefills_[i].waiting) {
            if (seq.status != SeqStatus::Running) continue;  // preempted earlier in this step
            run_running(seq, std::min({seq.n_uncomputed(), cap, budget}), out, budget);
            if (out.n_preempted > 0) admitting = false;
        } else if (admitting && seq.status == SeqStatus::Waiting &&
                   running_.size() < static_cast<size_t>(options_.max_seqs) && !held_for_shared_prefill(seq)) {
            admitting = admit(seq, cap, out, budget);
        }
    }
    top_up(out, budget);
}

bool Scheduler::admit(Sequence& seq, int64_t cap, ScheduleOutput& out, int64_t& budget) {
    const int64_t hit = admit_prefix(seq);
    const int64_t n = std::min({seq.n_uncomputed(), cap, budget});
    if (!ensure_blocks(seq, n, out)) {
        release(seq);  // keep nothing while waiting for memory
        return false;
    }
    note_admission(seq, hit);
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &seq));
    seq.status = SeqStatus::Running;
    running_.push_back(&seq);
    out.runs.push_back({&seq, static_cast<int32_t>(n), n == seq.n_uncomputed()});
    out.n_tokens += static_cast<int32_t>(n);
    budget -= n;
    return true;
}

// The step's leftover budget extends prefill chunks, shortest prompt first,
// so a lone long prompt still takes the whole budget. Blocks for the extra
// tokens come from free or evictable blocks only: nobody is preempted for them.
void Scheduler::top_up(ScheduleOutput& out, int64_t& budget) {
    for (const Prefill& p : prefills_) {
        if (budget <= 0) return;
        auto r = std::find_if(out.runs.begin(), out.runs.end(), [&](const ScheduledRun& x) { return x.seq == p.seq; });
        if (r == out.runs.end() || r->logits) continue;
        const int64_t n = r->n_tokens + std::min(p.seq->n_uncomputed() - r->n_tokens, budget);
        if (!ensure_blocks(*p.seq, n, out)) continue;
        budget -= n - r->n_tokens;
        out.n_tokens += static_cast<int32_t>(n - r->n_tokens);
        r->n_tokens = static_cast<int32_t>(n);
        r->logits = n == p.seq->n_uncomputed();
    }
}

void Scheduler::commit(const ScheduleOutput& out) {
    const int bs = block_size_;
    for (const ScheduledRun& r : out.runs) {
        const int64_t before = r.seq->n_computed;
        r.seq->n_computed += r.n_tokens - r.n_draft;
        TS_CHECK(r.seq->n_computed <= static_cast<int64_t>(r.seq->tokens.size()));
        // Share every block as soon as it is computed, mid-prefill included:
        // sequences held back for this prefix are admitted as it lands.
        if (r.seq->n_computed / bs > before / bs) cache_blocks(*r.seq);
        tables_.slide(*r.seq);  // after caching: the cache keeps the runs a later match needs
    }
}

void Scheduler::cache_blocks(const Sequence& seq) {
    if (!options_.prefix_cache) return;
    const int bs = block_size_;
    const auto n_full = static_cast<size_t>(std::min<int64_t>(seq.n_computed, static_cast<int64_t>(seq.tokens.size())) / bs);
    if (n_full == 0) return;
    // Full runs are whole blocks (a half holds at most half a run).
    block_ids_.clear();
    window_ids_.clear();
    for (size_t i = 0; i < n_full; ++i) {
        block_ids_.push_back(seq.block_table[i] / bs);
        if (!seq.window_table.empty()) window_ids_.push_back(seq.window_table[i] < 0 ? -1 : seq.window_table[i] / bs);
    }
    prefix_.insert(std::span<const int32_t>(seq.tokens.data(), n_full * bs), block_ids_, seq.cache_salt, window_ids_);
}

}  // namespace tessera
