// Attention micro-benchmarks for kernel_bench: one layer's attention_batch
// on one thread, at the best SIMD level, over a paged F16 K/V cache in the
// engine's layout (keys in lanes, blocks of 16, a shuffled block table), in
// SmolLM2-135M's shape (9 query heads, 3 KV heads of 64):
//   attention/prefill/N  a prompt of N tokens from an empty context
//   attention/decode/D   one token after D tokens of context
// Reports query-key pairs per second of CPU time (each pair: a 64-wide
// score dot and a 64-wide V multiply-add). Before timing, sampled rows are
// checked against the scalar reference attend_head (the unit tests'
// tolerance), so a broken kernel reports an error, not a speed.
#include "bench/attention_bench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "tensor/kv_type.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

constexpr int kHeads = 9, kKvHeads = 3, kHeadDim = 64, kBlockSize = 16;
constexpr GgmlType kKvType = GgmlType::F16;  // the engine's default

// A sequence's K/V cache of n_ctx positions plus the queries of its last
// n_tokens (positions n_ctx - n_tokens .. n_ctx - 1).
struct AttnCase {
    std::vector<uint8_t> k, v;
    std::vector<int32_t> table;
    std::vector<float> q;
    PagedKv kv{};
    AttentionShape shape{kHeads, kKvHeads, kHeadDim, 1.0f / std::sqrt(static_cast<float>(kHeadDim))};
    AttnSeq seq{};
};

std::shared_ptr<AttnCase> make_case(int64_t n_ctx, int32_t n_tokens) {
    auto c = std::make_shared<AttnCase>();
    const int kv_dim = kKvHeads * kHeadDim;
    const int64_t n_blocks = (n_ctx + kBlockSize - 1) / kBlockSize, n_slots = n_blocks * kBlockSize;
    const int64_t row_bytes = kv_row_bytes(kKvType, kv_dim);
    std::mt19937 rng(static_cast<uint32_t>(n_ctx * 7 + n_tokens));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    c->k.assign(static_cast<size_t>(n_slots * row_bytes + kKeysInLanesPadBytes), 0);
    c->v.resize(static_cast<size_t>(n_slots * row_bytes));
    std::vector<float> row(static_cast<size_t>(kv_dim));
    std::vector<uint8_t> k_row(static_cast<size_t>(row_bytes));
    for (int64_t slot = 0; slot < n_slots; ++slot) {
        for (float& x : row) x = nd(rng);
        quantize_row(kKvType, row.data(), k_row.data(), kv_dim);
        scatter_k_row(kKvType, k_row.data(), 0, row_bytes, kBlockSize, static_cast<int>(slot % kBlockSize),
                      c->k.data() + slot / kBlockSize * kBlockSize * row_bytes);
        for (float& x : row) x = nd(rng);
        quantize_row(kKvType, row.data(), c->v.data() + slot * row_bytes, kv_dim);
    }
    std::vector<int32_t> order(static_cast<size_t>(n_blocks));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int32_t b : order) c->table.push_back(b * kBlockSize);
    c->q.resize(static_cast<size_t>(n_tokens) * kHeads * kHeadDim);
    for (float& x : c->q) x = nd(rng);
    c->kv = PagedKv{c->k.data(), c->v.data(), kKvType, kKvType, row_bytes, row_bytes, nullptr, kBlockSize, kv_dim};
    c->seq = AttnSeq{c->table.data(), n_ctx - n_tokens, 0, n_tokens};
    return c;
}

// Empty when sampled output rows match attend_head; otherwise what is wrong.
std::string check_rows(const AttnCase& c, const std::vector<float>& out) {
    PagedKv kv = c.kv;
    kv.block_table = c.table.data();
    float ref[kHeadDim];
    const int q_dim = kHeads * kHeadDim;
    for (int32_t t = c.seq.n_tokens - 1; t >= 0; t -= 37) {
        for (int h = 0; h < kHeads; h += 4) {
            const size_t off = static_cast<size_t>(t) * q_dim + static_cast<size_t>(h) * kHeadDim;
            attend_head(c.shape, kv, c.q.data() + off, h, c.seq.pos0 + t + 1, ref);
            for (int d = 0; d < kHeadDim; ++d) {
                if (!(std::fabs(out[off + d] - ref[d]) <= 2e-5f * (1.0f + std::fabs(ref[d])))) {
                    char msg[160];
                    std::snprintf(msg, sizeof msg, "token %d head %d element %d: kernel %g, reference %g", t, h, d,
                                  static_cast<double>(out[off + d]), static_cast<double>(ref[d]));
                    return msg;
                }
            }
        }
    }
    return {};
}

void bench_attention(benchmark::State& state, const std::shared_ptr<AttnCase>& c) {
    ThreadPool pool(1);
    AttentionScratch scratch;
    std::vector<float> out(c->q.size());
    const std::vector<AttnSeq> seqs = {c->seq};
    attention_batch(c->shape, c->kv, seqs, c->q.data(), out.data(), pool, scratch, best_simd_level());
    if (const std::string err = check_rows(*c, out); !err.empty()) {
        state.SkipWithError(err.c_str());
        return;
    }
    for (auto _ : state) {
        attention_batch(c->shape, c->kv, seqs, c->q.data(), out.data(), pool, scratch, best_simd_level());
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    double pairs = 0;  // token t sees pos0 + t + 1 positions, with every query head
    for (int32_t t = 0; t < c->seq.n_tokens; ++t) pairs += static_cast<double>(c->seq.pos0 + t + 1) * kHeads;
    state.counters["pairs/s"] = benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_attention_benchmarks() {
    for (int32_t n : {128, 512}) {
        auto c = make_case(n, n);
        benchmark::RegisterBenchmark(("attention/prefill/" + std::to_string(n)).c_str(),
                                     [c](benchmark::State& st) { bench_attention(st, c); });
    }
    for (int64_t depth : {512, 4096}) {
        auto c = make_case(depth + 1, 1);
        benchmark::RegisterBenchmark(("attention/decode/" + std::to_string(depth)).c_str(),
                                     [c](benchmark::State& st) { bench_attention(st, c); });
    }
}

}  // namespace tessera
