// Lookup of a matmul's weight by address and the per-column sums of squares
// (see activation_stats.h).
#include "model/activation_stats.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {

ActivationStats::ActivationStats(const GgufFile& file) {
    for (const GgufTensorInfo& t : file.tensors()) {
        if (t.name.rfind("blk.", 0) != 0 || t.n_dims < 1 || t.n_dims > 3 || t.n_bytes == 0) continue;
        const int64_t n_mat = t.n_dims == 3 ? t.ne[2] : 1;
        Entry e;
        e.name = t.name;
        e.cols = t.ne[0];
        e.n_mat = n_mat;
        e.begin = t.data;
        e.mat_bytes = t.n_bytes / static_cast<size_t>(n_mat);
        e.sum2.assign(static_cast<size_t>(n_mat * t.ne[0]), 0.0);
        e.counts.assign(static_cast<size_t>(n_mat), 0);
        entries_.push_back(std::move(e));
    }
    by_address_.resize(entries_.size());
    for (size_t i = 0; i < entries_.size(); ++i) by_address_[i] = i;
    std::sort(by_address_.begin(), by_address_.end(),
              [&](size_t a, size_t b) { return entries_[a].begin < entries_[b].begin; });
}

void ActivationStats::record(const WeightMatrix& w, const float* x, int64_t n) {
    // The last entry starting at or before w.data, if w.data lies inside it.
    auto it = std::upper_bound(by_address_.begin(), by_address_.end(), w.data,
                               [&](const uint8_t* p, size_t i) { return p < entries_[i].begin; });
    if (it == by_address_.begin()) return;
    Entry& e = entries_[*(it - 1)];
    const size_t offset = static_cast<size_t>(w.data - e.begin);
    if (offset >= e.mat_bytes * static_cast<size_t>(e.n_mat)) return;
    TS_CHECK(w.cols == e.cols);
    const auto mat = static_cast<int64_t>(offset / e.mat_bytes);
    double* sum = e.sum2.data() + mat * e.cols;
    for (int64_t t = 0; t < n; ++t) {
        const float* row = x + t * e.cols;
        for (int64_t c = 0; c < e.cols; ++c) sum[c] += static_cast<double>(row[c]) * row[c];
    }
    e.counts[static_cast<size_t>(mat)] += n;
}

}  // namespace tessera
