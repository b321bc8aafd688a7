// Times the x86 chain loops on every pool thread at once; the wall time of
// the slowest thread sets the figure, as it does for a matmul.
#include "kernels/int8_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/check.h"
#include "kernels/cpu/int8_peak_x86.h"

namespace tessera {

double measure_int8_peak(ThreadPool& pool, SimdLevel level, int reps) {
    TS_CHECK(reps >= 1 && level <= best_simd_level());
    if (level == SimdLevel::Scalar) return 0.0;
    const bool vnni = level >= SimdLevel::Avx512Vnni;
    // About 12 ms a run at two 512-bit vpdpbusd per cycle.
    constexpr int64_t kRounds = int64_t{1} << 23;
    const int64_t macs_per_round = vnni ? x86::kAvx512MacsPerRound : x86::kAvx2MacsPerRound;
    std::atomic<uint32_t> sink{0};
    double best = 0.0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.run([&](int, int) {
            const uint32_t s = vnni ? x86::int8_peak_avx512(kRounds) : x86::int8_peak_avx2(kRounds);
            sink.fetch_add(s, std::memory_order_relaxed);
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(kRounds * macs_per_round * pool.size()) / s);
    }
    return best;
}

}  // namespace tessera
