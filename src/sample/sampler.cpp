// The Sampler's chain and history, and top_logprobs for the API's logprobs.
#include "sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "kernels/logits_scan.h"

namespace tessera {
namespace {

// History capacity reserved up front; a longer window grows as tokens arrive,
// so a huge penalty_last_n costs memory only for tokens actually generated.
constexpr size_t kHistoryReserve = 4096;

}  // namespace

Sampler::Sampler(SamplingParams params, int32_t n_vocab)
    : params_(std::move(params)), n_vocab_(n_vocab), rng_(params_.seed) {
    TS_CHECK_MSG(params_.validate(n_vocab).ok(), "SamplingParams not validated");
    candidates_.items.reserve(static_cast<size_t>(n_vocab));
    counts_.assign(static_cast<size_t>(n_vocab), 0);
    history_.reserve(std::min(static_cast<size_t>(params_.penalty_last_n), kHistoryReserve));
}

bool Sampler::penalties_active() const {
    return !history_.empty() &&
           (params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
            params_.presence_penalty != 0.0f);
}

int32_t Sampler::sample(std::span<const float> logits) {
    TS_CHECK(logits.size() == static_cast<size_t>(n_vocab_));
    if (params_.greedy() && params_.logit_bias.empty() && !penalties_active()) return argmax(logits);
    run_chain(logits);
    if (params_.greedy()) return pick_greedy(candidates_);
    return pick_random(candidates_, rng_);
}

void Sampler::run_chain(std::span<const float> logits) {
    Candidates& c = candidates_;
    c.reset_from(logits);
    if (penalties_active()) {
        apply_penalties(c, history_, params_.repeat_penalty, params_.frequency_penalty,
                        params_.presence_penalty, counts_);
    }
    apply_logit_bias(c, params_.logit_bias);
    if (params_.greedy()) return;
    top_k(c, params_.top_k);
    typical(c, params_.typical_p);
    top_p(c, params_.top_p);
    min_p(c, params_.min_p);
    apply_temperature(c, params_.temperature);
}

int32_t Sampler::sample_with_distribution(std::span<const float> logits, std::span<float> q) {
    TS_CHECK(q.size() == static_cast<size_t>(n_vocab_));
    std::fill(q.begin(), q.end(), 0.0f);
    if (params_.greedy()) {
        const int32_t token = sample(logits);
        q[static_cast<size_t>(token)] = 1.0f;
        return token;
    }
    TS_CHECK(logits.size() == static_cast<size_t>(n_vocab_));
    run_chain(logits);
    softmax(candidates_);
    for (const TokenLogit& t : candidates_.items) q[static_cast<size_t>(t.id)] = t.p;
    return draw(candidates_, rng_);
}

int32_t Sampler::sample_speculative(std::span<const float> logits, int32_t draft, std::span<const float> q) {
    TS_CHECK(q.size() == static_cast<size_t>(n_vocab_) && draft >= 0 && draft < n_vocab_);
    if (params_.greedy()) return sample(logits);
    TS_CHECK(logits.size() == static_cast<size_t>(n_vocab_));
    run_chain(logits);
    softmax(candidates_);
    const auto q_of = [&](int32_t id) { return static_cast<double>(q[static_cast<size_t>(id)]); };
    double p_draft = 0.0;
    for (const TokenLogit& t : candidates_.items) {
        if (t.id == draft) p_draft = t.p;
    }
    // Accept with probability min(1, p/q): u * q < p (q(draft) > 0, it was drawn from q).
    if (uniform01(rng_) * q_of(draft) < p_draft) return draft;
    // Rejected: p(draft) < q(draft), so the residual is zero at the draft.
    double residual = 0.0;
    for (const TokenLogit& t : candidates_.items) residual += std::max(0.0, t.p - q_of(t.id));
    if (!(residual > 0.0)) return draw(candidates_, rng_);  // p <= q everywhere only by rounding: p itself
    const double u = uniform01(rng_) * residual;
    double cum = 0.0;
    int32_t last = -1;
    for (const TokenLogit& t : candidates_.items) {
        const double r = std::max(0.0, t.p - q_of(t.id));
        if (r <= 0.0) continue;
        cum += r;
        last = t.id;
        if (u < cum) return t.id;
    }
    return last;  // rounding left cum a hair below u
}

// pick_greedy without the candidate list: the same token (the first of the
// largest logits) in two vector passes over the row.
int32_t Sampler::argmax(std::span<const float> logits) const {
    const LogitsStats s = logits_stats(logits);
    if (s.nan_or_pos_inf) {  // +inf is a valid pick; NaN aborts, as in Candidates::reset_from
        TS_CHECK_MSG(std::none_of(logits.begin(), logits.end(), [](float l) { return std::isnan(l); }), "NaN logit");
    }
    const int64_t best = first_index_of(logits, s.max);  // all -inf: 0
    TS_CHECK(best >= 0);
    return static_cast<int32_t>(best);
}

void Sampler::accept(int32_t token) {
    TS_CHECK(token >= 0 && token < n_vocab_);
    const size_t window = static_cast<size_t>(params_.penalty_last_n);
    if (window == 0) return;
    if (history_.size() < window) {
        history_.push_back(token);
        return;
    }
    history_[history_next_] = token;
    history_next_ = (history_next_ + 1) % window;
}

void Sampler::reset() {
    history_.clear();
    history_next_ = 0;
    rng_.seed(params_.seed);
}

Status check_logits(std::span<const float> logits) {
    // With no NaN and no +inf, some logit is finite exactly when the largest is.
    const LogitsStats s = logits_stats(logits);
    if (s.nan_or_pos_inf) return Status::error("the model produced NaN or infinite logits (corrupt weights?)");
    if (s.max == -std::numeric_limits<float>::infinity()) return Status::error("the model produced no finite logit");
    return ok_status();
}

double log_partition(std::span<const float> logits) {
    float max_l = -std::numeric_limits<float>::infinity();
    for (float l : logits) max_l = std::max(max_l, l);
    TS_CHECK_MSG(std::isfinite(max_l), "logits have no finite maximum");
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max_l);
    return max_l + std::log(sum);
}

float token_logprob(std::span<const float> logits, int32_t token) {
    TS_CHECK(token >= 0 && static_cast<size_t>(token) < logits.size());
    return static_cast<float>(logits[static_cast<size_t>(token)] - log_partition(logits));
}

std::vector<std::pair<int32_t, float>> top_logprobs(std::span<const float> logits, int k) {
    const size_t n = logits.size();
    const size_t keep = static_cast<size_t>(std::clamp<int64_t>(k, 0, static_cast<int64_t>(n)));
    if (keep == 0) return {};
    const double log_z = log_partition(logits);

    // Min-heap (by "better") of the best `keep` tokens seen so far.
    auto better = [&](int32_t a, int32_t b) {
        const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
        return la != lb ? la > lb : a < b;
    };
    std::vector<int32_t> heap;
    heap.reserve(keep);
    for (size_t i = 0; i < n; ++i) {
        const int32_t id = static_cast<int32_t>(i);
        if (heap.size() < keep) {
            heap.push_back(id);
            std::push_heap(heap.begin(), heap.end(), better);
        } else if (better(id, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), better);
            heap.back() = id;
            std::push_heap(heap.begin(), heap.end(), better);
        }
    }
    std::sort_heap(heap.begin(), heap.end(), better);
    std::vector<std::pair<int32_t, float>> out;
    out.reserve(keep);
    for (int32_t id : heap) {
        out.emplace_back(id, static_cast<float>(logits[static_cast<size_t>(id)] - log_z));
    }
    return out;
}

}  // namespace tessera
