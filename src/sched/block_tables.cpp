// BlockTables: block table entries are slots (model/kv_cache.h); whole blocks
// are pool ids slot / block_size, halves slot / half_block.
#include "sched/block_tables.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/check.h"

namespace tessera {

BlockTables::BlockTables(KvCache& cache, std::function<bool()> evict) : cache_(cache), evict_(std::move(evict)) {}

int32_t BlockTables::take(bool half) {
    BlockPool& pool = cache_.blocks();
    for (bool evicted = false;; evicted = true) {
        if (half) {
            const int32_t h = pool.allocate_half();
            if (h >= 0) return h * cache_.half_block();
        } else {
            const int32_t b = pool.allocate();
            if (b >= 0) return b * cache_.block_size();
        }
        if (evicted || !evict_()) return -1;
    }
}

void BlockTables::drop(int32_t slot, bool half) {
    if (half) {
        cache_.blocks().unref_half(slot / cache_.half_block());
    } else {
        TS_CHECK(slot % cache_.block_size() == 0);
        cache_.blocks().unref(slot / cache_.block_size());
    }
}

bool BlockTables::shared(int32_t slot, bool half) const {
    const BlockPool& pool = cache_.blocks();
    return half ? pool.half_ref_count(slot / cache_.half_block()) > 1
                : pool.ref_count(slot / cache_.block_size()) > 1;
}

int64_t BlockTables::capacity(const Sequence& seq) const {
    const auto n = static_cast<int64_t>(seq.block_table.size());
    return n * cache_.block_size() - (seq.half_tail ? cache_.block_size() - cache_.half_block() : 0);
}

bool BlockTables::ensure(Sequence& seq, int64_t upto) {
    const int bs = cache_.block_size(), half = cache_.half_block();
    std::vector<int32_t>& table = seq.block_table;
    if (seq.half_tail && upto > capacity(seq)) {
        // The short last run grows past its half: move it into a whole block.
        const int32_t whole = take(false);
        if (whole < 0) return false;
        const int64_t start = static_cast<int64_t>(table.size() - 1) * bs;
        cache_.copy_slots(table.back(), whole, static_cast<int>(std::clamp<int64_t>(seq.n_computed - start, 0, half)));
        drop(table.back(), true);
        table.back() = whole;
        seq.half_tail = false;
    }
    // Copy-on-write: forks share their prompt's runs, the partial last one too.
    const auto first = static_cast<size_t>(seq.n_computed / bs);
    if (first < table.size()) {
        const bool half_run = seq.half_tail && first + 1 == table.size();
        if (shared(table[first], half_run)) {
            const int32_t fresh = take(half_run);
            if (fresh < 0) return false;
            cache_.copy_slots(table[first], fresh, static_cast<int>(seq.n_computed - static_cast<int64_t>(first) * bs));
            drop(table[first], half_run);
            table[first] = fresh;
        }
    }
    while (capacity(seq) < upto) {
        const bool half_run = half > 0 && upto - capacity(seq) <= half;
        const int32_t slot = take(half_run);
        if (slot < 0) return false;
        table.push_back(slot);
        seq.half_tail = half_run;
    }
    return true;
}

void BlockTables::share(const Sequence& seq) {
    BlockPool& pool = cache_.blocks();
    for (size_t i = 0; i < seq.block_table.size(); ++i) {
        const int32_t slot = seq.block_table[i];
        if (seq.half_tail && i + 1 == seq.block_table.size()) {
            pool.ref_half(slot / cache_.half_block());
        } else {
            pool.ref(slot / cache_.block_size());
        }
    }
}

void BlockTables::release(Sequence& seq) {
    for (size_t i = 0; i < seq.block_table.size(); ++i) {
        drop(seq.block_table[i], seq.half_tail && i + 1 == seq.block_table.size());
    }
    seq.block_table.clear();
    seq.half_tail = false;
}

int64_t BlockTables::unfilled(const std::list<Sequence*>& running) const {
    int64_t n = static_cast<int64_t>(cache_.blocks().n_stranded_halves()) * cache_.half_block();
    std::vector<int32_t> shared_seen;
    for (const Sequence* s : running) {
        if (s->block_table.empty()) continue;
        const int32_t last = s->block_table.back();
        if (shared(last, s->half_tail)) {
            if (std::find(shared_seen.begin(), shared_seen.end(), last) != shared_seen.end()) continue;
            shared_seen.push_back(last);
        }
        n += capacity(*s) - s->n_computed;
    }
    return n;
}

}  // namespace tessera
