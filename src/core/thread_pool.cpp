// Persistent worker pool. Workers spin briefly on a generation counter (so
// back-to-back kernel calls are cheap) and then sleep on it with C++20 atomic
// wait/notify (a futex on Linux), so an idle pool uses no CPU.
#include "core/thread_pool.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {
namespace {

// Busy-wait budget before sleeping: a few microseconds of pause-spinning
// catches back-to-back kernel calls; then yielding lets other runnable threads
// use the core (the pool may share cores with other work) before the futex.
constexpr int kSpinIterations = 256;
constexpr int kYieldIterations = 16;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins, then sleeps, until `value` no longer holds `old`; returns the new
// value. While `busy` is non-zero the spinning goes on (yielding now and
// then, so other runnable threads on this core still get it).
template <class T>
T wait_for_change(const std::atomic<T>& value, T old, const std::atomic<int>& busy, std::atomic<uint64_t>& sleeps) {
    for (int i = 0;; ++i) {
        const T now = value.load(std::memory_order_acquire);
        if (now != old) return now;
        if (i >= kSpinIterations) {
            if (busy.load(std::memory_order_relaxed) == 0) break;
            if (i % kSpinIterations == 0) std::this_thread::yield();
        }
        cpu_relax();
    }
    for (int i = 0; i < kYieldIterations; ++i) {
        const T now = value.load(std::memory_order_acquire);
        if (now != old) return now;
        std::this_thread::yield();
    }
    T now = value.load(std::memory_order_acquire);
    while (now == old) {
        sleeps.fetch_add(1, std::memory_order_relaxed);
        value.wait(old, std::memory_order_acquire);
        now = value.load(std::memory_order_acquire);
    }
    return now;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
    workers_.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int thread_idx) {
    // Generations only advance in run() and the destructor, neither of which
    // can happen before the constructor returns, so this thread starts at 0.
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_change(generation_, seen, busy_, sleeps_);
        if (stop_.load(std::memory_order_relaxed)) return;
        (*job_)(thread_idx, n_threads_);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
}

void ThreadPool::run(FnRef<void(int, int)> fn) {
    if (n_threads_ == 1) {
        fn(0, 1);
        return;
    }
    job_ = &fn;
    pending_.store(n_threads_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    fn(0, n_threads_);
    int left = pending_.load(std::memory_order_acquire);
    while (left != 0) left = wait_for_change(pending_, left, busy_, sleeps_);
    job_ = nullptr;
}

void ThreadPool::parallel_for(int64_t n, FnRef<void(int64_t, int64_t)> fn, int64_t grain) {
    if (n <= 0) return;
    TS_CHECK(grain >= 1);
    const int64_t max_parts = std::max<int64_t>(1, n / grain);
    const int64_t parts = std::min<int64_t>(n_threads_, max_parts);
    if (parts == 1) {
        fn(0, n);
        return;
    }
    run([&](int idx, int) {
        if (idx >= parts) return;
        const int64_t begin = n * idx / parts, end = n * (idx + 1) / parts;
        if (begin < end) fn(begin, end);
    });
}

}  // namespace tessera
