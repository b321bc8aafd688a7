// Streams a large buffer with every pool thread; integer sums vectorise
// without -ffast-math, and each slice's sum goes to an atomic so the loads
// cannot be elided. Passes alternate between a plain sum and one that also
// prefetches non-temporally ahead, as the decode tiles on long rows do
// (kernels/cpu/dot_rows_x86_body.h): that read measured up to 5% faster in
// some processes, and a probe slower than the tiles' own stream gave
// roofline ratios above 1. The buffer asks for 2 MiB pages: on 4 KiB pages
// (scattered physical memory) one core read 28-32 GB/s, on 2 MiB pages
// 39-42 GB/s, and the model weights decode reads can sit in 2 MiB page-cache
// folios (core/mapped_file.h), so the smaller figure would flatter the
// roofline ratio.
#include "kernels/mem_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <sys/mman.h>

#include "core/check.h"

namespace tessera {
namespace {

// The tiles' prefetch distance (kPrefetchAheadBytes) and a chunk of the
// prefetching read, in elements.
constexpr int64_t kAhead = 10 * 1024 / sizeof(uint64_t);
constexpr int64_t kChunk = 4 * 1024 / sizeof(uint64_t);
constexpr int64_t kLine = 64 / sizeof(uint64_t);

uint64_t sum_range(const uint64_t* buf, int64_t b, int64_t e) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = b;
    for (; i + 4 <= e; i += 4) {
        s0 += buf[i];
        s1 += buf[i + 1];
        s2 += buf[i + 2];
        s3 += buf[i + 3];
    }
    for (; i < e; ++i) s0 += buf[i];
    return s0 + s1 + s2 + s3;
}

// Chunk by chunk, each after prefetching the lines kAhead past it (a
// prefetch inside the summing loop kept it from vectorising).
uint64_t sum_slice(const uint64_t* buf, int64_t b, int64_t e, bool prefetch) {
    if (!prefetch) return sum_range(buf, b, e);
    uint64_t s = 0;
    for (int64_t c = b; c < e; c += kChunk) {
        const int64_t ce = std::min(e, c + kChunk);
        for (int64_t p = c + kAhead; p < std::min(e, ce + kAhead); p += kLine) __builtin_prefetch(buf + p, 0, 0);
        s += sum_range(buf, c, ce);
    }
    return s;
}

}  // namespace

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
    TS_CHECK(reps >= 1 && bytes >= 4096);
    const size_t n = bytes / sizeof(uint64_t);
    void* mem = mmap(nullptr, n * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TS_CHECK(mem != MAP_FAILED);
    madvise(mem, n * sizeof(uint64_t), MADV_HUGEPAGE);  // advice: failing changes nothing
    auto* buf = static_cast<uint64_t*>(mem);
    // Touch every page from the threads that will read it (first-touch NUMA).
    pool.parallel_for(static_cast<int64_t>(n), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) buf[i] = static_cast<uint64_t>(i);
    });
    std::atomic<uint64_t> sink{0};
    double best = 0.0;
    for (int r = 0; r < 2 * reps; ++r) {
        const bool prefetch = r % 2 == 1;
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(static_cast<int64_t>(n), [&](int64_t b, int64_t e) {
            sink.fetch_add(sum_slice(buf, b, e, prefetch), std::memory_order_relaxed);
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / s);
    }
    munmap(mem, n * sizeof(uint64_t));
    return best;
}

}  // namespace tessera
