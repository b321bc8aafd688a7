// A sum-order study of kernel_bench (bench/sum_order_bench.cpp).
#pragma once

namespace tessera {

// Registers sum_order/quad/K and sum_order/oct/K (AVX2 CPUs only).
void register_sum_order_benchmarks();

}  // namespace tessera
