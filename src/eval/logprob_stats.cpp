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

KlSummary summarize_kl(std::vector<double> values) {
    KlSummary s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    const auto at = [&](double q) { return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1))]; };
    s.mean = sum / static_cast<double>(values.size());
    s.median = at(0.5);
    s.p99 = at(0.99);
    s.max = values.back();
    return s;
}

}  // namespace tessera
