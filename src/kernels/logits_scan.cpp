// Logits scans: the row kernel table's vector code or the scalar reference.
#include "kernels/logits_scan.h"

#include <algorithm>
#include <limits>

#include "kernels/row_kernels.h"

namespace tessera {

LogitsStats logits_stats(std::span<const float> logits, SimdLevel level) {
    if (const RowKernels* rk = find_row_kernels(level)) {
        return rk->logits_stats(logits.data(), static_cast<int64_t>(logits.size()));
    }
    LogitsStats s{-std::numeric_limits<float>::infinity(), false};
    for (float l : logits) {
        s.nan_or_pos_inf = s.nan_or_pos_inf || !(l < std::numeric_limits<float>::infinity());
        if (l > s.max) s.max = l;
    }
    return s;
}

int64_t first_index_of(std::span<const float> logits, float value, SimdLevel level) {
    if (const RowKernels* rk = find_row_kernels(level)) {
        return rk->first_equal(logits.data(), static_cast<int64_t>(logits.size()), value);
    }
    const auto it = std::find(logits.begin(), logits.end(), value);
    return it == logits.end() ? -1 : it - logits.begin();
}

}  // namespace tessera
