// Statistics of a model's predictions over a scored text: perplexity with
// its standard error, and KL divergence / top-1 agreement against a
// reference run's top log-probabilities (reference_logits.h).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

// log(sum(exp(logits))), computed stably, and the index of the largest logit.
struct RowSummary {
    double log_sum_exp = 0;
    int32_t argmax = 0;
};
RowSummary summarize_row(std::span<const float> logits);

class PerplexityAccumulator {
public:
    void add(double nll);
    int64_t count() const { return n_; }
    double perplexity() const;
    // Standard error of the perplexity, from that of the mean NLL.
    double perplexity_error() const;

private:
    double sum_ = 0, sum_sq_ = 0;
    int64_t n_ = 0;
};

// KL(reference || model) at one position, from the reference's top-k
// (token, log-prob) pairs: the k tokens exactly, and everything outside them
// as one bucket, which makes it a lower bound of the full-vocabulary KL
// (close to it when the top-k hold nearly all the mass).
double kl_from_top(std::span<const std::pair<int32_t, float>> reference_top, std::span<const float> logits,
                   const RowSummary& row);

struct KlSummary {
    double mean = 0, median = 0, p99 = 0, max = 0;
};
KlSummary summarize_kl(std::vector<double> values);

}  // namespace tessera
