// An arithmetic probe: how many int8 multiply-adds per second all threads of
// a pool issue with the instructions the quantized matmul tiles are built on
// (512-bit vpdpbusd at the VNNI and AMX levels, maddubs + madd on AVX2),
// running independent chains and nothing else. No vector tile can beat it,
// so `tessera bench` divides a prompt's layer multiply-adds by it: the
// prompt speed the machine could reach if those took no other instruction.
// (The AMX level's tile multiplies are not in the probe; its prompts' share
// of this peak can pass what the VNNI tiles could reach.)
#pragma once

#include "core/thread_pool.h"
#include "kernels/dot_kernels.h"

namespace tessera {

// The best of `reps` timed runs, in multiply-adds per second over all pool
// threads; 0 at the scalar level (no probe). `level` must not exceed
// best_simd_level().
double measure_int8_peak(ThreadPool& pool, SimdLevel level, int reps);

}  // namespace tessera
