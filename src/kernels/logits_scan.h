// Scans over a row of logits for sampling: validity and the greedy argmax,
// vectorized (a 49k-entry vocabulary per sequence per step otherwise costs
// more than the sampling itself).
#pragma once

#include <cstdint>
#include <span>

#include "kernels/dot_kernels.h"

namespace tessera {

struct LogitsStats {
    float max;            // the largest value ignoring NaN; -inf for an empty row
    bool nan_or_pos_inf;  // whether any value is NaN or +inf
};

// Both statistics in one pass.
LogitsStats logits_stats(std::span<const float> logits, SimdLevel level = best_simd_level());

// The lowest index holding `value` (== comparison, so -0 matches +0), or -1.
// With value = logits_stats(...).max this is the argmax, lowest id on ties.
int64_t first_index_of(std::span<const float> logits, float value, SimdLevel level = best_simd_level());

}  // namespace tessera
