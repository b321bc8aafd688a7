// A memory-read bandwidth probe: how fast all threads of a pool can stream a
// buffer much larger than the caches. The decode roofline divides by it.
#pragma once

#include <cstddef>

#include "core/thread_pool.h"

namespace tessera {

// The best read bandwidth in bytes per second over a `bytes`-sized buffer
// of `reps` plain passes and `reps` prefetching ones, each pool thread
// summing its own contiguous slice.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps);

}  // namespace tessera
