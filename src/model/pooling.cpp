// Pooling of hidden states into one embedding per sequence (model/pooling.h).
#include "model/pooling.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace tessera {

const char* pooling_name(Pooling p) {
    switch (p) {
        case Pooling::None: return "none";
        case Pooling::Mean: return "mean";
        case Pooling::Cls: return "cls";
        case Pooling::Last: return "last";
        case Pooling::Rank: return "rank";
    }
    return "?";
}

Expected<Pooling> parse_pooling(std::string_view name) {
    for (Pooling p : {Pooling::None, Pooling::Mean, Pooling::Cls, Pooling::Last, Pooling::Rank}) {
        if (name == pooling_name(p)) return p;
    }
    return Status::error("unknown pooling '" + std::string(name) + "' (none, mean, cls, last, rank)");
}

Expected<Pooling> model_pooling(const GgufFile& file, const std::string& arch) {
    const std::string key = arch + ".pooling_type";
    if (file.find(key) == nullptr) return Pooling::Last;
    auto v = file.get_int(key);
    if (!v) return v.status();
    if (*v < 0 || *v > static_cast<int64_t>(Pooling::Rank)) {
        return Status::error(key + " is " + std::to_string(*v) + ", not a known pooling type (0..4)");
    }
    return static_cast<Pooling>(*v);
}

Status check_sentence_pooling(Pooling p) {
    if (p == Pooling::Mean || p == Pooling::Cls || p == Pooling::Last) return ok_status();
    return Status::error(std::string("the model's pooling is '") + pooling_name(p) +
                         "', which gives no single vector per input; serve it with --pooling mean, cls or last");
}

bool pooling_reads(Pooling p, int64_t pos, int64_t n_prompt) {
    switch (p) {
        case Pooling::Mean: return pos < n_prompt;
        case Pooling::Cls: return pos == 0;
        case Pooling::Last: return pos == n_prompt - 1;
        default: return false;
    }
}

bool pooling_allows_prefix_reuse(Pooling p) { return p == Pooling::Last; }

void PoolingAccumulator::reset() {
    std::fill(sum_.begin(), sum_.end(), 0.0);
    n_rows_ = 0;
}

void PoolingAccumulator::add(std::span<const float> row) {
    TS_CHECK_MSG(row.size() == sum_.size(), "pooled row width differs from n_embd");
    TS_CHECK_MSG(pooling_ == Pooling::Mean || n_rows_ == 0, "cls and last pooling read one row");
    for (size_t i = 0; i < row.size(); ++i) sum_[i] += row[i];
    ++n_rows_;
}

std::vector<float> PoolingAccumulator::finish() const {
    TS_CHECK_MSG(n_rows_ > 0, "pooling finished before any row");
    // The mean's division by n_rows_ would not change the normalised vector,
    // so the sum is normalised directly (cls and last hold one row).
    std::vector<float> out(sum_.size());
    double ss = 0.0;
    for (double x : sum_) ss += x * x;
    const double inv = ss > 0.0 ? 1.0 / std::sqrt(ss) : 0.0;
    for (size_t i = 0; i < sum_.size(); ++i) out[i] = static_cast<float>(sum_[i] * inv);
    return out;
}

}  // namespace tessera
