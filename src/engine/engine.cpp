// The engine thread: take submitted requests, schedule a step, run one
// batched forward pass, sample every sequence that reached its end (or pool
// an embedding request's hidden states), stream the text out, and retire
// finished or cancelled sequences.
#include "engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "core/check.h"
#include "core/sigbus_guard.h"
#include "engine/engine_impl.h"
#include "engine/kv_layout.h"
#include "sample/sampler.h"

namespace tessera {
namespace {

// An idle engine woken by one request waits for the rest of its burst before
// the first step: clients that finish together come back together, and a
// step started on the first few arrivals makes the others wait a whole step
// (seconds for long prompts on a CPU). The window ends after a short quiet
// spell, so a lone request pays a few milliseconds at most.
constexpr auto kBurstQuiet = std::chrono::milliseconds(3);
constexpr auto kBurstMax = std::chrono::milliseconds(30);

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

Expected<Pooling> resolve_pooling(const Model& model, const EngineOptions& o) {
    Expected<Pooling> p = o.pooling ? Expected<Pooling>(*o.pooling) : model_pooling(model.gguf(), model.config().arch);
    if (!p) return p;
    TS_RETURN_IF_ERROR(check_sentence_pooling(*p));
    return p;
}

}  // namespace

Engine::Impl::Impl(Model& model, const Tokenizer& tokenizer, EngineOptions options, std::unique_ptr<DiskTier> disk_tier)
    : model_(model), tokenizer_(tokenizer), options_(options),
      cache_(make_cache(model.config(), options)),
      scheduler_(cache_.blocks(), cache_.block_size(),
                 SchedulerOptions{options.max_batch_tokens, options.max_seqs, options.prefix_cache, options.prefill_share},
                 window_pool(cache_, model.config())),
      pins_(scheduler_.prefix_cache(), static_cast<int32_t>(static_cast<double>(cache_.n_blocks()) *
                                                            std::clamp(options.max_pinned_share, 0.0, 1.0))),
      pool_(options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      mask_worker_(options.mask_thread == EngineOptions::MaskThread::On ||
                   (options.mask_thread == EngineOptions::MaskThread::Auto &&
                    static_cast<unsigned>(pool_.size()) < std::thread::hardware_concurrency())),
      pooling_(resolve_pooling(model, options)) {
    const int64_t capacity = static_cast<int64_t>(cache_.n_blocks()) * cache_.block_size();
    const int64_t model_ctx = options.max_context > 0 ? options.max_context : model.config().n_ctx_train;
    max_context_ = std::min(model_ctx, capacity);
    metrics_.kv_blocks_total = cache_.n_blocks();
    metrics_.kv_window_blocks_total = cache_.n_window_blocks();
    metrics_.kv_block_size = cache_.block_size();
    if (options.spec.drafter) {
        metrics_.spec_drafter = options.spec.drafter->name();
        draft_token_cost_ = kVerifyPositionCost + static_cast<double>(options.spec.drafter->weight_bytes()) /
                                                      static_cast<double>(std::max<uint64_t>(1, model.gguf().tensor_bytes()));
    }
    if (disk_tier) {
        disk_ = std::make_unique<KvDiskOffload>(std::move(disk_tier), cache_, scheduler_.prefix_cache());
        disk_->publish(metrics_);
    }
    last_progress_ns_ = now_ns();
    thread_ = std::thread([this] { loop(); });
}

Engine::Impl::~Impl() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

bool Engine::Impl::healthy(std::chrono::milliseconds stall) const {
    if (!model_.check_file().ok()) return false;
    if (!busy_.load(std::memory_order_relaxed)) return true;
    return now_ns() - last_progress_ns_.load(std::memory_order_relaxed) <
           std::chrono::duration_cast<std::chrono::nanoseconds>(stall).count();
}

Expected<std::shared_ptr<RequestHandle>> Engine::Impl::submit(GenerationRequest request) {
    const int32_t n_vocab = model_.config().n_vocab;
    if (model_damaged()) return Status::error(ErrorKind::Unavailable, model_.file_changed_message());
    if (request.prompt.empty()) return Status::error("the prompt is empty");
    for (int32_t t : request.prompt) {
        if (t < 0 || t >= n_vocab) return Status::error("prompt token id " + std::to_string(t) + " is out of range");
    }
    if (request.embed) {
        TS_RETURN_IF_ERROR(pooling_.status());
        if (request.n != 1 || request.constraint) {
            return Status::error("an embedding request has one choice and no output constraint");
        }
    }
    // A generation needs room for one token after its prompt; an embedding does not.
    if (static_cast<int64_t>(request.prompt.size()) + (request.embed ? 0 : 1) > max_context_) {
        return Status::error(ErrorKind::LimitExceeded, "the prompt has " + std::to_string(request.prompt.size()) +
                             " tokens; the context holds " + std::to_string(max_context_));
    }
    TS_RETURN_IF_ERROR(options_.limits.check(request));
    if (request.max_tokens < 1) return Status::error("max_tokens must be at least 1");
    for (int32_t t : request.stop_token_ids) {
        if (t < 0 || t >= n_vocab) return Status::error("stop token id " + std::to_string(t) + " is out of range");
    }
    TS_RETURN_IF_ERROR(request.sampling.validate(n_vocab));
    const GenerationConstraint constraint = request.constraint;  // for the metrics, once accepted
    if (constraint.tables && (constraint.tables->grammar() != constraint.grammar ||
                              &constraint.tables->vocab() != grammar_vocabulary().get())) {
        return Status::error("the constraint's token tables are not its grammar's over this model's vocabulary");
    }

    auto state = std::make_shared<RequestState>();
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return Status::error(ErrorKind::Unavailable, "the engine is shutting down");
        const int64_t queued = static_cast<int64_t>(incoming_.size()) + metrics_.waiting.load();
        if (queued >= options_.max_waiting) {
            metrics_.requests_rejected.fetch_add(1, std::memory_order_relaxed);
            return Status::error(ErrorKind::Overloaded,
                                 "server overloaded: " + std::to_string(queued) + " requests are waiting");
        }
        state->handle = std::make_shared<RequestHandle>(next_id_++, request.n);
        state->request = std::move(request);
        state->submitted = std::chrono::steady_clock::now();
        incoming_.push_back(state);
    }
    cv_.notify_one();
    if (constraint) {
        metrics_.constrained_requests.fetch_add(1, std::memory_order_relaxed);
        metrics_.grammar_compile.observe(constraint.compile_seconds);
    }
    return state->handle;
}

void Engine::Impl::loop() {
    std::deque<std::shared_ptr<RequestState>> incoming;
    while (true) {
        {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait_for(lock, std::chrono::milliseconds(50),
                         [&] { return stop_ || !incoming_.empty() || !scheduler_.idle(); });
            if (scheduler_.idle() && !incoming_.empty()) gather_burst(lock);
            if (stop_) break;
            incoming.swap(incoming_);
        }
        take_incoming(incoming);
        handle_cancellations();
        if (damaged_.load(std::memory_order_relaxed)) fail_if_model_damaged();  // submitted just before
        busy_.store(!scheduler_.idle(), std::memory_order_relaxed);
        if (!scheduler_.idle()) step();
        retire_done();
        pins_.expire(std::chrono::steady_clock::now());  // the loop wakes at least every 50 ms
        last_progress_ns_.store(now_ns(), std::memory_order_relaxed);
        metrics_.waiting = static_cast<int64_t>(scheduler_.n_waiting());
        metrics_.running = static_cast<int64_t>(scheduler_.n_running());
        metrics_.kv_blocks_used = cache_.n_blocks() - cache_.free_blocks();
        metrics_.kv_window_blocks_used = cache_.n_window_blocks() - cache_.window_blocks().n_free();
        metrics_.kv_blocks_cached = scheduler_.prefix_cache().evictable_blocks();
        metrics_.kv_blocks_pinned = pins_.n_blocks();
        metrics_.kv_pins = static_cast<int64_t>(pins_.n_pins());
        metrics_.kv_slots_unfilled = scheduler_.unfilled_kv_slots();
        metrics_.prefix_queries = scheduler_.prefix_queried_tokens();
        metrics_.prefix_hit_tokens = scheduler_.prefix_hit_tokens();
        if (disk_) disk_->publish(metrics_);
    }
    for (auto& c : choices_) finish(*c, FinishReason::Cancelled);
    {
        std::lock_guard<std::mutex> lock(mu_);
        incoming.swap(incoming_);
    }
    for (auto& state : incoming) {
        for (int32_t i = 0; i < state->request.n; ++i) {
            StreamEvent e;
            e.index = i;
            e.finish = FinishReason::Cancelled;
            state->handle->push(std::move(e));
        }
    }
    retire_done();
    if (disk_ && !damaged_.load(std::memory_order_relaxed)) {
        pins_.expire(std::chrono::steady_clock::time_point::max());  // pinned prefixes are written out too
        disk_->flush();  // the RAM cache outlives the process on disk
        disk_->publish(metrics_);
    }
}

void Engine::Impl::gather_burst(std::unique_lock<std::mutex>& lock) {
    const auto deadline = std::chrono::steady_clock::now() + kBurstMax;
    size_t seen = incoming_.size();
    for (auto now = std::chrono::steady_clock::now(); !stop_ && now < deadline; now = std::chrono::steady_clock::now()) {
        const auto until = std::min(deadline, now + kBurstQuiet);
        if (!cv_.wait_until(lock, until, [&] { return stop_ || incoming_.size() != seen; })) return;
        seen = incoming_.size();
    }
}

void Engine::Impl::take_incoming(std::deque<std::shared_ptr<RequestState>>& incoming) {
    while (!incoming.empty()) {
        start_request(std::move(incoming.front()));
        incoming.pop_front();
    }
}

// The vocabulary's bytes, sorted for mask walks: built once per model, the
// first time a request (or the server, compiling one) needs it.
std::shared_ptr<const TokenVocabulary> Engine::Impl::grammar_vocabulary() {
    std::lock_guard<std::mutex> lock(grammar_vocab_mu_);
    if (!grammar_vocab_) {
        grammar_vocab_ = std::make_shared<const TokenVocabulary>(TokenVocabulary::from_tokenizer(tokenizer_));
    }
    return grammar_vocab_;
}

void Engine::Impl::start_request(std::shared_ptr<RequestState> state) {
    const int32_t n_vocab = model_.config().n_vocab;
    const std::shared_ptr<const TokenVocabulary> vocab = state->request.constraint ? grammar_vocabulary() : nullptr;
    const int32_t max_draft = max_draft_for(state->request);
    const DraftLength draft(max_draft, std::min(options_.spec.min_draft, max_draft), draft_token_cost_);
    const DraftLength forced(state->request.constraint ? options_.spec.max_forced : 0, 0, kVerifyPositionCost);
    auto leader = std::make_unique<Choice>(state, 0, tokenizer_, n_vocab, vocab, draft, forced);
    for (int32_t i = 1; i < state->request.n; ++i) {
        leader->pending_forks.push_back(std::make_unique<Choice>(state, i, tokenizer_, n_vocab, vocab, draft, forced));
    }
    Sequence& seq = leader->seq;
    const bool embed = state->request.embed;
    if (embed) leader->pooled = std::make_unique<PoolingAccumulator>(*pooling_, model_.config().n_embd);
    scheduler_.add(&seq, NewSequence{state->handle->id(), state->request.prompt, state->request.cache_salt,
                                     !embed || pooling_allows_prefix_reuse(*pooling_)});
    if (disk_ && seq.reuse_prefix && options_.prefix_cache) {
        disk_->promote(std::span<const int32_t>(seq.tokens).first(seq.tokens.size() - 1), seq.cache_salt);
    }
    for (int32_t t : seq.tokens) leader->sampler.accept(t);
    metrics_.prompt_tokens.fetch_add(static_cast<uint64_t>(seq.n_prompt), std::memory_order_relaxed);
    track(std::move(leader));
}

void Engine::Impl::track(std::unique_ptr<Choice> choice) {
    owner_[&choice->seq] = choice.get();
    choices_.push_back(std::move(choice));
}

void Engine::Impl::handle_cancellations() {
    for (auto& c : choices_) {
        if (!c->done && c->req->handle->cancelled()) finish(*c, FinishReason::Cancelled);
    }
}

void Engine::Impl::step() {
    ScheduleOutput out = scheduler_.schedule();
    for (const SlotCopy& c : out.copies) cache_.copy_slots(c.src, c.dst, c.n, c.window);  // before anything reads them
    metrics_.preemptions.fetch_add(static_cast<uint64_t>(out.n_preempted), std::memory_order_relaxed);
    if (out.runs.empty()) {
        // Nothing runs and the first waiting sequence could not be admitted
        // into an empty cache: it never will be.
        Sequence* stuck = scheduler_.n_running() == 0 ? scheduler_.front_waiting() : nullptr;
        if (stuck) finish(*owner_.at(stuck), FinishReason::Error, "the request does not fit in the KV cache");
        return;
    }
    batch_.clear();
    std::vector<Choice*> owners;
    owners.reserve(out.runs.size());
    for (const ScheduledRun& r : out.runs) {
        const Sequence& s = *r.seq;
        Choice* owner = owner_.at(r.seq);
        // An embedding wants hidden states, never a logits row.
        if (r.n_draft > 0) {
            // The last sampled token and its draft: every position gets a logits row.
            draft_run_.assign(s.tokens.begin() + s.n_computed, s.tokens.end());
            draft_run_.insert(draft_run_.end(), s.draft.begin(), s.draft.begin() + r.n_draft);
            batch_.add(s.block_table.data(), s.n_computed, draft_run_, true, true);
        } else {
            batch_.add(s.block_table.data(), s.n_computed,
                       std::span<const int32_t>(s.tokens.data() + s.n_computed, static_cast<size_t>(r.n_tokens)),
                       r.logits && !owner->pooled);
        }
        if (!s.window_table.empty()) batch_.seqs.back().window_table = s.window_table.data();
        if (owner->pooled) mark_pooled_rows(*owner, batch_.seqs.back());
        owners.push_back(owner);
    }
    // The first logits row of a constrained run needs its mask at the grammar
    // state the sampled tokens left: computed beside the forward pass.
    masks_ahead_.clear();
    for (size_t k = 0; k < out.runs.size(); ++k) {
        if (out.runs[k].logits && owners[k]->constraint && !owners[k]->done) masks_ahead_.push_back(&*owners[k]->constraint);
    }
    mask_worker_.start(masks_ahead_);
    Status st = model_.forward_batch(batch_, cache_, logits_, pool_, &hidden_);
    mask_worker_.wait();  // before anything else touches the choices
    metrics_.steps.fetch_add(1, std::memory_order_relaxed);
    if (fail_if_model_damaged()) return;  // this step's logits may come from zeroed weights
    if (!st.ok()) {
        for (Choice* c : owners) finish(*c, FinishReason::Error, st.message());
        return;
    }
    scheduler_.commit(out);
    const size_t n_vocab = static_cast<size_t>(model_.config().n_vocab);
    size_t row = 0;
    size_t hidden_row = 0;
    sampled_.clear();
    for (size_t k = 0; k < out.runs.size(); ++k) {
        Choice& c = *owners[k];
        const ScheduledRun& r = out.runs[k];
        if (c.pooled) {
            hidden_row = pool_rows(c, batch_.seqs[k], hidden_row);
            if (r.logits) finish(c, FinishReason::Stop);  // the prompt is done: the vector goes out
            continue;
        }
        if (!r.logits) continue;
        if (r.n_draft > 0) {
            verify_draft(c, r, logits_.data() + row * n_vocab);
        } else {
            process_logits(c, logits_.data() + row * n_vocab);
        }
        row += 1 + static_cast<size_t>(r.n_draft);
        sampled_.push_back(&c);
    }
    propose_drafts();
}

void Engine::Impl::mark_pooled_rows(const Choice& choice, const BatchSequence& run) {
    const Pooling p = *pooling_;
    for (int32_t k = 0; k < run.n_tokens; ++k) {
        if (pooling_reads(p, run.pos0 + k, choice.seq.n_prompt)) batch_.want_hidden[run.first + k] = 1;
    }
}

// Adds the run's hidden rows, which start at `row` of this step's, to the
// choice's pooled sum; returns the row after them. A run from position 0
// starts the sum over: a preempted embedding is recomputed from the start
// (it matches no cached prefix unless it pools the last position only).
size_t Engine::Impl::pool_rows(Choice& choice, const BatchSequence& run, size_t row) {
    const auto n_embd = static_cast<size_t>(model_.config().n_embd);
    if (run.pos0 == 0) choice.pooled->reset();
    for (int32_t k = 0; k < run.n_tokens; ++k) {
        if (!batch_.want_hidden[run.first + k]) continue;
        choice.pooled->add(std::span<const float>(hidden_.data() + row * n_embd, n_embd));
        ++row;
    }
    return row;
}

void Engine::Impl::process_logits(Choice& choice, const float* logits) {
    if (choice.done) return;
    const int32_t n_vocab = model_.config().n_vocab;
    Status valid = check_logits(std::span<const float>(logits, static_cast<size_t>(n_vocab)));
    if (!valid.ok()) {
        finish(choice, FinishReason::Error, valid.message());  // its pending forks end with it
        return;
    }
    if (!choice.pending_forks.empty()) fork_siblings(choice, logits);
    sample_token(choice, logits);
}

// The grammar mask, when the choice has one, applies before the whole
// sampling chain (penalties, bias, top-k/p, ...), so those only ever see
// allowed tokens. Its allowed set was computed during the forward pass when
// the mask worker runs (step()), else it is computed here.
// Returns the token taken, or -1 when the choice ended without one.
int32_t Engine::Impl::sample_token(Choice& choice, const float* logits, int32_t draft, const float* draft_q) {
    std::span<const float> row(logits, static_cast<size_t>(model_.config().n_vocab));
    if (choice.constraint) {
        row = choice.constraint->mask(row);
        metrics_.grammar_mask.observe(choice.constraint->last_mask_seconds());
        if (row.empty()) {
            finish(choice, FinishReason::Error, "the grammar allows no token of this model's vocabulary here");
            return -1;
        }
    }
    const int32_t token = draft_q ? choice.sampler.sample_speculative(row, draft, std::span<const float>(draft_q, row.size()))
                                  : choice.sampler.sample(row);
    on_token(choice, row.data(), token);
    return token;
}

// Choices 1..n-1 start from choice 0's computed prompt: they share its blocks
// (copy-on-write on the partial last one) and sample from the same logits.
void Engine::Impl::fork_siblings(Choice& leader, const float* logits) {
    std::vector<std::unique_ptr<Choice>> forks = std::move(leader.pending_forks);
    leader.pending_forks.clear();
    for (auto& f : forks) {
        scheduler_.fork(leader.seq, &f->seq);
        for (int32_t t : f->seq.tokens) f->sampler.accept(t);
        Choice& fork = *f;
        track(std::move(f));
        sample_token(fork, logits);
        sampled_.push_back(&fork);
    }
}

void Engine::Impl::on_token(Choice& choice, const float* logits, int32_t token) {
    const GenerationRequest& req = choice.req->request;
    const auto now = std::chrono::steady_clock::now();
    if (choice.n_generated == 0) {
        choice.first_token = now;
        metrics_.ttft.observe(seconds_between(choice.req->submitted, now));
    } else {
        metrics_.inter_token.observe(seconds_between(choice.last_token, now));
    }
    choice.last_token = now;
    choice.sampler.accept(token);
    scheduler_.append_token(&choice.seq, token);
    ++choice.n_generated;
    metrics_.generated_tokens.fetch_add(1, std::memory_order_relaxed);

    const bool stop_token = std::find(req.stop_token_ids.begin(), req.stop_token_ids.end(), token) !=
                            req.stop_token_ids.end();
    // Under a grammar an end-of-generation token was only allowed where the
    // grammar accepts: it ends the choice even with ignore_eos.
    if (((!req.ignore_eos || choice.constraint) && tokenizer_.is_eog(token)) || stop_token) {
        finish(choice, FinishReason::Stop);
        return;
    }
    if (choice.constraint && !choice.constraint->accept(token)) {
        finish(choice, FinishReason::Error, "the grammar rejected a sampled token");  // the mask allowed it: a bug
        return;
    }
    choice.unsent_tokens.push_back(token);
    if (req.top_logprobs >= 0) {
        const auto n = static_cast<size_t>(model_.config().n_vocab);
        const std::span<const float> row(logits, n);
        TokenLogprob lp;
        lp.token = token;
        lp.top = top_logprobs(row, std::max(req.top_logprobs, 1));
        lp.logprob = token_logprob(row, token);
        if (req.top_logprobs == 0) lp.top.clear();
        choice.unsent_logprobs.push_back(std::move(lp));
    }
    auto piece = choice.stops.push(choice.detok.push(token));
    if (!piece.emit.empty()) emit(choice, std::move(piece.emit));
    if (piece.stopped || (choice.constraint && choice.constraint->complete())) {
        finish(choice, FinishReason::Stop);
    } else if (choice.n_generated >= req.max_tokens ||
               static_cast<int64_t>(choice.seq.tokens.size()) >= max_context_) {
        finish(choice, FinishReason::Length);
    }
}

void Engine::Impl::emit(Choice& choice, std::string text) {
    StreamEvent e;
    e.index = choice.index;
    e.text = std::move(text);
    e.tokens = std::move(choice.unsent_tokens);
    e.logprobs = std::move(choice.unsent_logprobs);
    choice.unsent_tokens.clear();
    choice.unsent_logprobs.clear();
    choice.req->handle->push(std::move(e));
}

void Engine::Impl::finish(Choice& choice, FinishReason reason, const std::string& error) {
    if (choice.done) return;
    choice.done = true;
    StreamEvent e;
    e.index = choice.index;
    if (!choice.stops.stopped() && reason != FinishReason::Error) {
        auto tail = choice.stops.push(choice.detok.flush());
        e.text = std::move(tail.emit);
        if (!tail.stopped) e.text += choice.stops.flush();
    }
    e.tokens = std::move(choice.unsent_tokens);
    e.logprobs = std::move(choice.unsent_logprobs);
    e.finish = reason;
    e.error = error;
    e.prompt_tokens = choice.seq.n_prompt;
    e.completion_tokens = choice.n_generated;
    e.cached_tokens = choice.seq.n_cached;
    if (choice.pooled && reason == FinishReason::Stop) e.embedding = choice.pooled->finish();
    if (choice.n_generated > 0) {
        e.seconds_to_first_token = seconds_between(choice.req->submitted, choice.first_token);
        e.seconds_decoding = seconds_between(choice.first_token, choice.last_token);
    }
    // Cached (and pinned) before the final event goes out, so a client's next
    // request finds the prefix and the usage can say what was written.
    if (choice.seq.status != SeqStatus::Finished && reason != FinishReason::Error) {
        scheduler_.cache_blocks(choice.seq);
        e.cache_write_tokens = pin_prefix(choice);
    }
    choice.req->handle->push(std::move(e));
    metrics_.e2e_latency.observe(seconds_between(choice.req->submitted, std::chrono::steady_clock::now()));
    if (choice.index == 0) metrics_.requests_finished.fetch_add(1, std::memory_order_relaxed);
    if (choice.seq.status != SeqStatus::Finished) scheduler_.remove(&choice.seq);
    if (options_.spec.drafter) options_.spec.drafter->forget(draft_key(choice));
    for (auto& f : choice.pending_forks) finish(*f, reason, error);
}

// Pins the request's marked prompt prefix (whole blocks of it, all in the
// prefix cache by now) until its TTL. Returns the pinned tokens this request
// computed rather than read from the cache (0 when nothing was pinned).
int64_t Engine::Impl::pin_prefix(const Choice& choice) {
    const GenerationRequest& r = choice.req->request;
    const int64_t bs = cache_.block_size();
    const int64_t n_pin = std::min<int64_t>(r.cache_pin.n_tokens, choice.seq.n_prompt) / bs * bs;
    if (n_pin <= 0 || r.cache_pin.ttl.count() <= 0 || !options_.prefix_cache) return 0;
    PrefixCache::Match m = scheduler_.prefix_cache().match(
        std::span<const int32_t>(r.prompt.data(), static_cast<size_t>(n_pin)), r.cache_salt);
    if (m.n_tokens < n_pin) {  // a part was never cached (e.g. a preempted prompt): nothing to keep
        scheduler_.prefix_cache().release(m);
        return 0;
    }
    if (!pins_.pin(std::move(m), std::chrono::steady_clock::now() + r.cache_pin.ttl)) return 0;
    return n_pin - std::min(choice.seq.n_cached, n_pin);
}

// The model file changed on disk: nothing it computes can be trusted any
// more, so every request in flight ends with an error (one log line says
// why) and submit() refuses new ones. Returns whether that is the case.
bool Engine::Impl::fail_if_model_damaged() {
    if (!damaged_.load(std::memory_order_relaxed)) {
        const Status file = model_.check_file();
        if (file.ok()) return false;
        damaged_.store(true, std::memory_order_release);
        std::fprintf(stderr,
                     "tessera: error: %s (reads of lost pages so far: %lu, answered with zeros; %zu requests in "
                     "flight failed; new ones get errors)\n",
                     file.message().c_str(), sigbus_guard::absorbed_faults(), choices_.size());
    }
    const std::string message = model_.file_changed_message();
    for (auto& c : choices_) finish(*c, FinishReason::Error, message);
    return true;
}

void Engine::Impl::retire_done() {
    for (auto it = choices_.begin(); it != choices_.end();) {
        if ((*it)->done) {
            owner_.erase(&(*it)->seq);
            it = choices_.erase(it);
        } else {
            ++it;
        }
    }
}

Expected<std::unique_ptr<Engine>> Engine::start(Model& model, const Tokenizer& tokenizer, EngineOptions options) {
    if (options.block_size < 1 || options.block_size > 256) return Status::error("block size must be 1..256");
    if (options.max_batch_tokens < 1) return Status::error("max batch tokens must be positive");
    if (options.max_seqs < 1) return Status::error("max sequences must be positive");
    if (options.prefill_share < -1) return Status::error("the prefill share must be -1 (auto), 0 (off) or positive");
    TS_RETURN_IF_ERROR(check_kv_types(options.kv_types, model.config().head_dim));
    if (kv_layout(model.config(), options).n_blocks * options.block_size > INT32_MAX) {
        return Status::error("the KV cache may hold at most " + std::to_string(INT32_MAX) + " tokens");
    }
    if (model.config().n_vocab != tokenizer.n_vocab()) {
        return Status::error("the tokenizer has " + std::to_string(tokenizer.n_vocab()) +
                             " tokens but the model " + std::to_string(model.config().n_vocab));
    }
    std::unique_ptr<DiskTier> disk_tier;
    if (!options.kv_disk_dir.empty()) {
        if (!options.prefix_cache) return Status::error("the KV disk tier needs the prefix cache");
        const int64_t block_bytes = KvCache::bytes_per_block(model.config().n_layer, model.config().kv_dim(),
                                                             options.block_size, options.kv_types);
        TS_ASSIGN_OR_RETURN(disk_tier, open_kv_disk(model, options.kv_disk_dir, options.kv_disk_bytes,
                                                    options.kv_types, options.block_size, block_bytes));
    }
    return std::unique_ptr<Engine>(
        new Engine(std::make_unique<Impl>(model, tokenizer, options, std::move(disk_tier))));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;
Expected<std::shared_ptr<RequestHandle>> Engine::submit(GenerationRequest r) { return impl_->submit(std::move(r)); }
const Tokenizer& Engine::tokenizer() const { return impl_->tokenizer(); }
std::shared_ptr<const TokenVocabulary> Engine::grammar_vocabulary() const { return impl_->grammar_vocabulary(); }
const ModelConfig& Engine::model_config() const { return impl_->config(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
const EngineMetrics& Engine::metrics() const { return impl_->metrics(); }
int64_t Engine::max_context() const { return impl_->max_context(); }
Expected<Pooling> Engine::embedding_pooling() const { return impl_->pooling(); }
bool Engine::healthy(std::chrono::milliseconds stall) const { return impl_->healthy(stall); }
bool Engine::model_damaged() const { return impl_->model_damaged(); }

}  // namespace tessera
