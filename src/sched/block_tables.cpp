// BlockTables: block table entries are slots (model/kv_cache.h); whole blocks
// are pool ids slot / block_size, halves slot / half_block. No K/V moves here:
// copies are recorded for the engine.
#include "sched/block_tables.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/check.h"

namespace tessera {

BlockTables::BlockTables(BlockPool& pool, int32_t block_size, std::function<bool(bool window)> evict,
                         WindowPool window)
    : pool_(pool), block_size_(block_size), evict_(std::move(evict)), window_(window) {
    TS_CHECK(block_size > 0);
    TS_CHECK(window.pool == nullptr || window.window > 0);
}

int32_t BlockTables::take(bool half) {
    for (bool evicted = false;; evicted = true) {
        if (half) {
            const int32_t h = pool_.allocate_half();
            if (h >= 0) return h * half_block();
        } else {
            const int32_t b = pool_.allocate();
            if (b >= 0) return b * block_size_;
        }
        if (evicted || !evict_(false)) return -1;
    }
}

int32_t BlockTables::take_window() {
    for (bool evicted = false;; evicted = true) {
        const int32_t b = window_.pool->allocate();
        if (b >= 0) return b * block_size_;
        if (evicted || !evict_(true)) return -1;
    }
}

void BlockTables::drop(int32_t slot, bool half) {
    if (half) {
        pool_.unref_half(slot / half_block());
    } else {
        TS_CHECK(slot % block_size_ == 0);
        pool_.unref(slot / block_size_);
    }
}

bool BlockTables::shared(int32_t slot, bool half) const {
    return half ? pool_.half_ref_count(slot / half_block()) > 1 : pool_.ref_count(slot / block_size_) > 1;
}

int64_t BlockTables::capacity(const Sequence& seq) const {
    const auto n = static_cast<int64_t>(seq.block_table.size());
    return n * block_size_ - (seq.half_tail ? block_size_ - half_block() : 0);
}

bool BlockTables::ensure(Sequence& seq, int64_t upto, std::vector<SlotCopy>& copies) {
    const int bs = block_size_, half = half_block();
    const auto copy = [&copies](int32_t src, int32_t dst, int64_t n) {
        if (n > 0) copies.push_back({src, dst, static_cast<int32_t>(n)});
    };
    std::vector<int32_t>& table = seq.block_table;
    if (seq.half_tail && upto > capacity(seq)) {
        // The short last run grows past its half: move it into a whole block.
        const int32_t whole = take(false);
        if (whole < 0) return false;
        const int64_t start = static_cast<int64_t>(table.size() - 1) * bs;
        copy(table.back(), whole, std::clamp<int64_t>(seq.n_computed - start, 0, half));
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
            copy(table[first], fresh, seq.n_computed - static_cast<int64_t>(first) * bs);
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
    return ensure_window(seq, copies);
}

// The window table follows the block table run for run, in whole blocks
// (its runs are few: halves would save little), copy-on-write the same way.
bool BlockTables::ensure_window(Sequence& seq, std::vector<SlotCopy>& copies) {
    if (window_.pool == nullptr) return true;
    const int bs = block_size_;
    std::vector<int32_t>& table = seq.window_table;
    const auto first = static_cast<size_t>(seq.n_computed / bs);
    if (first < table.size() && table[first] >= 0 && window_.pool->ref_count(table[first] / bs) > 1) {
        const int32_t fresh = take_window();
        if (fresh < 0) return false;
        const int64_t n = seq.n_computed - static_cast<int64_t>(first) * bs;
        if (n > 0) copies.push_back({table[first], fresh, static_cast<int32_t>(n), true});
        window_.pool->unref(table[first] / bs);
        table[first] = fresh;
    }
    while (table.size() < seq.block_table.size()) {
        const int32_t slot = take_window();
        if (slot < 0) return false;
        table.push_back(slot);
    }
    return true;
}

void BlockTables::slide(Sequence& seq) {
    if (window_.pool == nullptr) return;
    const auto behind = static_cast<size_t>(std::max<int64_t>(0, seq.n_computed - window_.window + 1) / block_size_);
    for (size_t i = 0; i < behind && i < seq.window_table.size(); ++i) {
        if (seq.window_table[i] < 0) continue;
        window_.pool->unref(seq.window_table[i] / block_size_);
        seq.window_table[i] = -1;
    }
}

void BlockTables::share(const Sequence& seq) {
    for (size_t i = 0; i < seq.block_table.size(); ++i) {
        const int32_t slot = seq.block_table[i];
        if (seq.half_tail && i + 1 == seq.block_table.size()) {
            pool_.ref_half(slot / half_block());
        } else {
            pool_.ref(slot / block_size_);
        }
    }
    for (int32_t slot : seq.window_table) {
        if (slot >= 0) window_.pool->ref(slot / block_size_);
    }
}

void BlockTables::truncate(Sequence& seq, int64_t upto) {
    std::vector<int32_t>& table = seq.block_table;
    const auto keep = static_cast<size_t>(std::max<int64_t>(0, (upto + block_size_ - 1) / block_size_));
    while (table.size() > keep) {
        drop(table.back(), seq.half_tail);  // only the last entry can be a half
        table.pop_back();
        seq.half_tail = false;
    }
    while (seq.window_table.size() > keep) {
        if (seq.window_table.back() >= 0) window_.pool->unref(seq.window_table.back() / block_size_);
        seq.window_table.pop_back();
    }
}

void BlockTables::release(Sequence& seq) {
    for (size_t i = 0; i < seq.block_table.size(); ++i) {
        drop(seq.block_table[i], seq.half_tail && i + 1 == seq.block_table.size());
    }
    seq.block_table.clear();
    seq.half_tail = false;
    for (int32_t slot : seq.window_table) {
        if (slot >= 0) window_.pool->unref(slot / block_size_);
    }
    seq.window_table.clear();
}

int64_t BlockTables::unfilled(const std::list<Sequence*>& running) const {
    int64_t n = static_cast<int64_t>(pool_.n_stranded_halves()) * half_block();
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
