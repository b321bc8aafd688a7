// Log-softmax statistics (see logprob_stats.h).
#include "eval/logprob_stats.h"

#include <algorithm>
#include <cmath>

namespace tessera {

RowSummary summarize_row(std::span<const float> logits) {
    RowSummary r;
    float max = -INFINITY;
    for (size_t v = 0; v < logits.size(); ++v) {
        if (logits[v] > max) {
            max = logits[v];
            r.argmax = static_cast<int32_t>(v);
        }
    }
    double sum = 0;
    for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
    r.log_sum_exp = max + std::log(sum);
    return r;
}

void PerplexityAccumulator::add(double nll) {
    sum_ += nll;
    sum_sq_ += nll * nll;
    ++n_;
}

double PerplexityAccumulator::perplexity() const { return n_ ? std::exp(sum_ / static_cast<double>(n_)) : NAN; }

double PerplexityAccumulator::perplexity_error() const {
    if (n_ < 2) return NAN;
    const double mean = sum_ / static_cast<double>(n_);
    const double var = std::max(0.0, sum_sq_ / static_cast<double>(n_) - mean * mean);
    return perplexity() * std::sqrt(var / static_cast<double>(n_ - 1));
}

double kl_from_top(std::span<const std::pair<int32_t, float>> reference_top, std::span<const float> logits,
                   const RowSummary& row) {
    double kl = 0, ref_mass = 0, model_mass = 0;
    for (const auto& [token, ref_lp] : reference_top) {
        const double model_lp = static_cast<double>(logits[static_cast<size_t>(token)]) - row.log_sum_exp;
        const double p = std::exp(static_cast<double>(ref_lp));
        kl += p * (ref_lp - model_lp);
        ref_mass += p;
        model_mass += std::exp(model_lp);
    }
    const double ref_rest = 1.0 - ref_mass, model_rest = std::max(1.0 - model_mass, 1e-30);
    if (ref_rest > 1e-12) kl += ref_rest * (std::log(ref_rest) - std::log(model_rest));
    return std::max(0.0, kl);
}

double kl_full(std::span<const float> reference_log_probs, std::span<const float> logits, const RowSummary& row) {
    double kl = 0;
    for (size_t v = 0; v < reference_log_probs.size(); ++v) {
        const float ref_lp = reference_log_probs[v];
        if (ref_lp <= -16.0f) continue;
        kl += std::exp(static_cast<double>(ref_lp)) * (ref_lp - (static_cast<double>(logits[v]) - row.log_sum_exp));
    }
    return kl;
}

int32_t argmax(std::span<const float> values) {
    return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

namespace {

// Mean of n values from their sum and sum of squares, with its standard
// error (0 for fewer than 11 values, as llama.cpp reports it).
Estimate mean_of(double sum, double sum_sq, int64_t n) {
    if (n < 1) return {};
    const double mean = sum / static_cast<double>(n);
    const double var = sum_sq / static_cast<double>(n) - mean * mean;
    return {mean, var > 0 && n > 10 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0};
}

}  // namespace

void ReferenceComparison::add(double kl, bool same_top, double nll, double reference_nll) {
    kl_.push_back(kl);
    same_top_ += same_top;
    const double p_diff = std::exp(-nll) - std::exp(-reference_nll);
    sum_p_diff_ += p_diff;
    sum_p_diff2_ += p_diff * p_diff;
    sum_p_diff4_ += p_diff * p_diff * p_diff * p_diff;
    reference_ppl_.add(reference_nll);
}

Estimate ReferenceComparison::kl_mean() const {
    double sum = 0, sum_sq = 0;
    for (double v : kl_) {
        sum += v;
        sum_sq += v * v;
    }
    return mean_of(sum, sum_sq, count());
}

Estimate ReferenceComparison::same_top() const {
    if (count() < 2) return {count() ? static_cast<double>(same_top_) : 0.0, 0};
    const double f = static_cast<double>(same_top_) / static_cast<double>(count());
    return {f, std::sqrt(f * (1 - f) / static_cast<double>(count() - 1))};
}

Estimate ReferenceComparison::p_diff_mean() const { return mean_of(sum_p_diff_, sum_p_diff2_, count()); }

Estimate ReferenceComparison::p_diff_rms() const {
    const Estimate mse = mean_of(sum_p_diff2_, sum_p_diff4_, count());
    const double rms = std::sqrt(mse.value);
    return {rms, rms > 0 ? 0.5 / rms * mse.error : 0.0};
}

KlSummary summarize_kl(std::vector<double> values) {
    KlSummary s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    const auto at = [&](double q) {
        const double x = q * static_cast<double>(values.size() - 1);
        const auto i = static_cast<size_t>(x);
        const size_t j = std::min(i + 1, values.size() - 1);
        return values[i] + (x - static_cast<double>(i)) * (values[j] - values[i]);
    };
    s.mean = sum / static_cast<double>(values.size());
    s.median = at(0.5);
    s.p99 = at(0.99);
    s.max = values.back();
    return s;
}

}  // namespace tessera
