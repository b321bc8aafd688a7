// Tests for core/thread_pool.h: every thread index runs exactly once per
// region, the caller takes part, regions run back to back without loss, and
// parallel_for covers a range exactly once.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(ThreadPoolTest, EachIndexRunsOnceAndCallerIsThreadZero) {
    for (int n : {1, 2, 4, 7}) {
        ThreadPool pool(n);
        EXPECT_EQ(pool.size(), n);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::thread::id zero_id;
        pool.run([&](int idx, int n_threads) {
            EXPECT_EQ(n_threads, n);
            hits[static_cast<size_t>(idx)].fetch_add(1);
            if (idx == 0) zero_id = std::this_thread::get_id();
        });
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
        EXPECT_EQ(zero_id, std::this_thread::get_id());
    }
}

TEST(ThreadPoolTest, ManyBackToBackRuns) {
    ThreadPool pool(4);
    std::atomic<int64_t> total{0};
    const int kRuns = std::getenv("TESSERA_SANITIZED") ? 1000 : 5000;
    for (int i = 0; i < kRuns; ++i) {
        pool.run([&](int idx, int) { total.fetch_add(idx + 1, std::memory_order_relaxed); });
    }
    EXPECT_EQ(total.load(), int64_t{kRuns} * (1 + 2 + 3 + 4));
}

TEST(ThreadPoolTest, ResultsWrittenByWorkersAreVisibleAfterRun) {
    ThreadPool pool(3);
    std::vector<int> out(3, 0);
    for (int round = 1; round <= 500; ++round) {
        pool.run([&](int idx, int) { out[static_cast<size_t>(idx)] = round * 10 + idx; });
        for (int i = 0; i < 3; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], round * 10 + i);
    }
}

TEST(ThreadPoolTest, ParallelForCoversRangeExactlyOnce) {
    for (int n_threads : {1, 3}) {
        ThreadPool pool(n_threads);
        for (int64_t n : {0, 1, 2, 5, 1000}) {
            std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
            pool.parallel_for(n, [&](int64_t b, int64_t e) {
                EXPECT_LT(b, e);
                for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
            });
            for (auto& s : seen) ASSERT_EQ(s.load(), 1);
        }
    }
}

TEST(ThreadPoolTest, ParallelForRespectsGrain) {
    ThreadPool pool(4);
    std::atomic<int> calls{0};
    pool.parallel_for(10, [&](int64_t b, int64_t e) {
        EXPECT_GE(e - b, 5);
        calls.fetch_add(1);
    }, 5);
    EXPECT_EQ(calls.load(), 2);
}

TEST(ThreadPoolTest, IdlePoolShutsDownCleanly) {
    ThreadPool pool(3);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers asleep on the futex
    std::atomic<int> n{0};
    pool.run([&](int, int) { n.fetch_add(1); });
    EXPECT_EQ(n.load(), 3);
}

TEST(ThreadPoolTest, BusyScopeKeepsWorkersAwakeOnlyWhileAlive) {
    ThreadPool pool(3);
    std::atomic<int> n{0};
    uint64_t before_sleeps = 0;
    {
        const ThreadPool::Busy outer(pool);
        {
            const ThreadPool::Busy inner(pool);  // scopes nest
            pool.run([&](int, int) { n.fetch_add(1); });
        }
        const uint64_t sleeps = pool.worker_sleeps();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long past the spin budget
        EXPECT_EQ(pool.worker_sleeps(), sleeps) << "a worker slept inside a Busy scope";
        pool.run([&](int, int) { n.fetch_add(1); });
        // Counted before the scope ends: a worker may go to sleep at once after
        // (a count taken outside had raced it, under ASan on an Intel Xeon).
        before_sleeps = pool.worker_sleeps();
    }
    EXPECT_EQ(n.load(), 6);
    // Outside the scope the two idle workers go to sleep (no CPU use).
    for (int i = 0; i < 1000 && pool.worker_sleeps() < before_sleeps + 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(pool.worker_sleeps(), before_sleeps + 2);
    pool.run([&](int, int) { n.fetch_add(1); });
    EXPECT_EQ(n.load(), 9);
}

}  // namespace
}  // namespace tessera
