#include "sched/prefill_sharing.h"

#include <algorithm>

namespace tessera {

int64_t pending_shared_tokens(std::span<const int32_t> lookup, uint64_t salt,
                              const std::list<Sequence*>& running, int32_t block_size) {
    int64_t pending = 0;
    for (const Sequence* r : running) {
        if (r->cache_salt != salt) continue;
        const size_t n = std::min(lookup.size(), r->tokens.size());
        const auto diff = std::mismatch(lookup.begin(), lookup.begin() + static_cast<ptrdiff_t>(n), r->tokens.begin());
        const int64_t common = static_cast<int64_t>(diff.first - lookup.begin());
        const int64_t shared = common / block_size * block_size;
        if (shared > r->n_computed) pending = std::max(pending, shared);
    }
    return pending;
}

}  // namespace tessera
