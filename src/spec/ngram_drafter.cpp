// NgramDrafter: a backwards scan per suffix length. O(len * n) per call,
// a few microseconds for thousands of tokens: far below one decode step.
#include "spec/ngram_drafter.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {

NgramDrafter::NgramDrafter(NgramOptions options) : options_(options) {
    TS_CHECK_MSG(options_.min_n >= 1 && options_.min_n <= options_.max_n, "ngram sizes must be 1 <= min <= max");
}

void NgramDrafter::propose(std::span<DraftRequest> requests) {
    for (DraftRequest& r : requests) draft(r.tokens, r.max_tokens, *r.out);
}

void NgramDrafter::draft(std::span<const int32_t> tokens, int32_t max_tokens, std::vector<int32_t>& out) const {
    out.clear();
    const auto len = static_cast<int64_t>(tokens.size());
    if (max_tokens <= 0) return;
    for (int64_t n = std::min<int64_t>(options_.max_n, len - 1); n >= options_.min_n; --n) {
        const std::span<const int32_t> suffix = tokens.subspan(static_cast<size_t>(len - n));
        // The most recent earlier occurrence: its continuation is the likeliest
        // one (a quote in progress continues where it last left off).
        for (int64_t start = len - n - 1; start >= 0; --start) {
            if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
            const int64_t from = start + n;
            const int64_t take = std::min<int64_t>(max_tokens, len - from);
            out.assign(tokens.begin() + from, tokens.begin() + from + take);
            return;
        }
    }
}

}  // namespace tessera
