// Statistics of a model's predictions over a scored text: perplexity with
// its standard error, and KL divergence / top-1 agreement / change of the
// true token's probability against a reference run, either its top
// log-probabilities (reference_logits.h) or all of them (llama_kld_file.h).
// Definitions follow llama.cpp's perplexity tool so the figures compare.
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

// KL(reference || model) over the whole vocabulary, as llama.cpp sums it:
// reference tokens more than 16 nats down (p < 1.1e-7) are left out.
double kl_full(std::span<const float> reference_log_probs, std::span<const float> logits, const RowSummary& row);

// The index of the largest value (the first of equals).
int32_t argmax(std::span<const float> values);

// Percentiles interpolate between neighbours (llama.cpp's definition; the
// median of an even count is the mean of the middle two).
struct KlSummary {
    double mean = 0, median = 0, p99 = 0, max = 0;
};
KlSummary summarize_kl(std::vector<double> values);

// A value and its standard error.
struct Estimate {
    double value = 0, error = 0;
};

// Everything measured against a reference, one scored position at a time.
class ReferenceComparison {
public:
    // kl: KL(reference || model) here; same_top: whether both put the same
    // token first; nll / reference_nll: the true next token's.
    void add(double kl, bool same_top, double nll, double reference_nll);
    int64_t count() const { return static_cast<int64_t>(kl_.size()); }
    KlSummary kl() const { return summarize_kl(kl_); }
    Estimate kl_mean() const;
    Estimate same_top() const;  // fraction of positions
    // dp = p_model(true token) - p_reference(true token): its mean and its
    // root mean square (llama.cpp's "Mean dp" and "RMS dp").
    Estimate p_diff_mean() const;
    Estimate p_diff_rms() const;
    const PerplexityAccumulator& reference_perplexity() const { return reference_ppl_; }

private:
    std::vector<double> kl_;
    int64_t same_top_ = 0;
    double sum_p_diff_ = 0, sum_p_diff2_ = 0, sum_p_diff4_ = 0;
    PerplexityAccumulator reference_ppl_;
};

}  // namespace tessera
