// Streams a large buffer with every pool thread; integer sums vectorise
// without -ffast-math, and each slice's sum goes to an atomic so the loads
// cannot be elided.
#include "kernels/mem_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/check.h"

namespace tessera {

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
    TS_CHECK(reps >= 1 && bytes >= 4096);
    const size_t n = bytes / sizeof(uint64_t);
    std::vector<uint64_t> buf(n);
    // Touch every page from the threads that will read it (first-touch NUMA).
    pool.parallel_for(static_cast<int64_t>(n), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) buf[i] = static_cast<uint64_t>(i);
    });
    std::atomic<uint64_t> sink{0};
    double best = 0.0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(static_cast<int64_t>(n), [&](int64_t b, int64_t e) {
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int64_t i = b;
            for (; i + 4 <= e; i += 4) {
                s0 += buf[i];
                s1 += buf[i + 1];
                s2 += buf[i + 2];
                s3 += buf[i + 3];
            }
            for (; i < e; ++i) s0 += buf[i];
            sink.fetch_add(s0 + s1 + s2 + s3, std::memory_order_relaxed);
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / s);
    }
    return best;
}

}  // namespace tessera
