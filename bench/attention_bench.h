// Attention micro-benchmarks of kernel_bench (bench/attention_bench.cpp).
#pragma once

namespace tessera {

// Registers attention/prefill/N and attention/decode/D with Google Benchmark.
void register_attention_benchmarks();

}  // namespace tessera
