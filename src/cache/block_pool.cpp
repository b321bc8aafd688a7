// BlockPool: a free-list stack, a list of stranded halves and ref counts per
// half. Misuse (bad id, double free, sharing a free block, treating a whole
// block as halves or the reverse) is an engine bug and aborts via TS_CHECK.
#include "cache/block_pool.h"

#include "core/check.h"

namespace tessera {

BlockPool::BlockPool(int32_t n_blocks) {
    TS_CHECK(n_blocks >= 0 && n_blocks <= INT32_MAX / 2);
    state_.assign(static_cast<size_t>(n_blocks), State::Free);
    ref_counts_.assign(2 * static_cast<size_t>(n_blocks), 0);
    stranded_at_.assign(2 * static_cast<size_t>(n_blocks), -1);
    free_list_.reserve(static_cast<size_t>(n_blocks));
    // Pushed in reverse so a fresh pool hands out 0, 1, 2, ...
    for (int32_t b = n_blocks - 1; b >= 0; --b) free_list_.push_back(b);
}

int32_t BlockPool::allocate() {
    if (free_list_.empty()) return -1;
    const int32_t b = free_list_.back();
    free_list_.pop_back();
    TS_CHECK(state_[static_cast<size_t>(b)] == State::Free);
    state_[static_cast<size_t>(b)] = State::Whole;
    ref_counts_[2 * static_cast<size_t>(b)] = 1;
    return b;
}

void BlockPool::ref(int32_t b) {
    check_id(b);
    TS_CHECK_MSG(state_[static_cast<size_t>(b)] == State::Whole, "ref of a free block");
    if (++ref_counts_[2 * static_cast<size_t>(b)] == 2 && observer_) observer_(b, true);
}

void BlockPool::unref(int32_t b) {
    check_id(b);
    TS_CHECK_MSG(state_[static_cast<size_t>(b)] == State::Whole, "unref of a free block (double free)");
    const int32_t left = --ref_counts_[2 * static_cast<size_t>(b)];
    if (left == 1 && observer_) observer_(b, false);
    if (left == 0) {
        state_[static_cast<size_t>(b)] = State::Free;
        free_list_.push_back(b);
    }
}

int32_t BlockPool::ref_count(int32_t b) const {
    check_id(b);
    const State s = state_[static_cast<size_t>(b)];
    TS_CHECK_MSG(s != State::Split, "whole-block ref count of a split block");
    return s == State::Whole ? ref_counts_[2 * static_cast<size_t>(b)] : 0;
}

int32_t BlockPool::allocate_half() {
    int32_t h;
    if (!stranded_.empty()) {
        h = stranded_.back();
        unstrand(h);
    } else {
        if (free_list_.empty()) return -1;
        const int32_t b = free_list_.back();
        free_list_.pop_back();
        state_[static_cast<size_t>(b)] = State::Split;
        h = 2 * b;
        strand(h + 1);
    }
    ref_counts_[static_cast<size_t>(h)] = 1;
    return h;
}

void BlockPool::ref_half(int32_t h) {
    check_half(h);
    TS_CHECK_MSG(state_[static_cast<size_t>(h / 2)] == State::Split && ref_counts_[static_cast<size_t>(h)] > 0,
                 "ref of a free half block");
    ++ref_counts_[static_cast<size_t>(h)];
}

void BlockPool::unref_half(int32_t h) {
    check_half(h);
    TS_CHECK_MSG(state_[static_cast<size_t>(h / 2)] == State::Split && ref_counts_[static_cast<size_t>(h)] > 0,
                 "unref of a free half block (double free)");
    if (--ref_counts_[static_cast<size_t>(h)] > 0) return;
    const int32_t mate = h ^ 1;
    if (ref_counts_[static_cast<size_t>(mate)] > 0) {
        strand(h);
        return;
    }
    unstrand(mate);
    state_[static_cast<size_t>(h / 2)] = State::Free;
    free_list_.push_back(h / 2);
}

int32_t BlockPool::half_ref_count(int32_t h) const {
    check_half(h);
    TS_CHECK_MSG(state_[static_cast<size_t>(h / 2)] != State::Whole, "half ref count of a whole block");
    return ref_counts_[static_cast<size_t>(h)];
}

void BlockPool::check_id(int32_t b) const {
    TS_CHECK_MSG(b >= 0 && b < n_blocks(), "block id out of range");
}

void BlockPool::check_half(int32_t h) const {
    TS_CHECK_MSG(h >= 0 && h / 2 < n_blocks(), "half block id out of range");
}

void BlockPool::strand(int32_t h) {
    stranded_at_[static_cast<size_t>(h)] = static_cast<int32_t>(stranded_.size());
    stranded_.push_back(h);
}

// Swap-with-last removal keeps it O(1).
void BlockPool::unstrand(int32_t h) {
    const int32_t at = stranded_at_[static_cast<size_t>(h)];
    TS_CHECK(at >= 0);
    const int32_t last = stranded_.back();
    stranded_[static_cast<size_t>(at)] = last;
    stranded_at_[static_cast<size_t>(last)] = at;
    stranded_.pop_back();
    stranded_at_[static_cast<size_t>(h)] = -1;
}

}  // namespace tessera
