// A persistent compute pool for kernels: workers are created once and woken
// for each parallel region, and the calling thread takes part as thread 0, so
// a region costs a wake-up, not a thread creation.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/fn_ref.h"

namespace tessera {

class ThreadPool {
public:
    // n_threads counts the calling thread; n_threads - 1 workers are started.
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }

    // Calls fn(thread_idx, n_threads) once on each of the n_threads threads
    // (the caller is thread 0) and returns when all calls have returned. Not
    // re-entrant: fn must not call run() on the same pool, and only one thread
    // may call run() at a time.
    void run(FnRef<void(int thread_idx, int n_threads)> fn);

    // Splits [0, n) into at most size() contiguous ranges of at least `grain`
    // items and calls fn(begin, end) for each, in parallel.
    void parallel_for(int64_t n, FnRef<void(int64_t begin, int64_t end)> fn,
                      int64_t grain = 1);

    // While a Busy scope is alive, idle workers keep spinning instead of
    // going to sleep: a forward pass runs ~150 parallel regions per step
    // with short serial gaps between them, and a futex sleep + wake per gap
    // costs more than the gap. Scopes nest.
    // How many times a worker has gone to sleep on the futex (observability
    // for tests: within a Busy scope it does not grow).
    uint64_t worker_sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

    class Busy {
    public:
        explicit Busy(ThreadPool& pool) : pool_(pool) { pool_.busy_.fetch_add(1, std::memory_order_relaxed); }
        ~Busy() { pool_.busy_.fetch_sub(1, std::memory_order_relaxed); }
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;

    private:
        ThreadPool& pool_;
    };

private:
    void worker_loop(int thread_idx);

    int n_threads_;
    std::vector<std::thread> workers_;
    const FnRef<void(int, int)>* job_ = nullptr;  // valid during run()
    std::atomic<uint32_t> generation_{0};  // bumped once per run() and at shutdown
    std::atomic<int> pending_{0};          // workers still inside the current job
    std::atomic<bool> stop_{false};
    std::atomic<int> busy_{0};  // live Busy scopes
    std::atomic<uint64_t> sleeps_{0};
};

}  // namespace tessera
