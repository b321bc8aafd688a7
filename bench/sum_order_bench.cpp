// A study for issue 5's prompt target on AVX2-only CPUs, not engine code:
// the AVX2 one-row x eight-token Q4_0 prompt tile in two sum orders.
//
//   sum_order/quad/K  tessera's order (dot_legacy_x86_body.h): four-block
//                     steps, two int32 lanes per block, so every step spends
//                     a widening multiply, an offset add, a convert, a scale
//                     multiply and an FMA per token on four blocks;
//   sum_order/oct/K   eight-block steps with one lane per block (eight byte
//                     dots summed in int16: 8 x 2 x 15 x 128 < 2^15), those
//                     five operations per token on eight blocks; a row's last
//                     two blocks (576-wide rows) take a two-block step.
//
// Both read plain Q4_0 blocks and unpack them per step; the activations are
// laid out for each order beforehand (the matmul prepares them once per
// token). The two orders round differently, so switching the engine to the
// second would change every level's bits (the scalar reference, the AVX-512
// tiles) at once. Both are checked against a scalar reference before timing.
// Results and what they mean: docs/benchmarks/HISTORY.md, "Where the AVX2 targets
// stand" (session 13).
//
//   build/kernel_bench --benchmark_filter=sum_order
#include "bench/sum_order_bench.h"

#if defined(__x86_64__)
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/dot_kernels.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace tessera {
namespace {

constexpr int kToks = 8;

// Activations of one token in each order's layout, per step. Cache-line
// aligned, as the matmul's prepared rows are: left to the allocator's 16
// bytes, half the 32-byte loads straddled two lines and the eight-block
// order measured 10-25% slower than it does aligned.
struct alignas(64) QuadAct {  // four blocks in the lane order a a c c b b d d
    int8_t qs[4][32];
    int32_t neg8[8];
    float d[8];
};
struct alignas(64) OctAct {  // eight blocks, block L in lane L
    int8_t qs[8][32];
    int32_t neg8[8];
    float d[8];
};
struct alignas(64) PairAct {  // a row's last two blocks a, b: lanes 0 (a) and 4 (b)
    int8_t qs[2][32];
    int32_t neg8[8];
    float d[8];
};

__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
__m256i join(const void* p, const void* q) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p))),
                                   _mm_loadu_si128(static_cast<const __m128i*>(q)), 1);
}
float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
// acc += (wd * a.d) * float(s16 pairs + a.neg8)
template <class A>
__m256 scale_fma(__m256i s16, const A& a, __m256 wd, __m256 acc) {
    const __m256i q = _mm256_add_epi32(load256(a.neg8), _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    return _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_loadu_ps(a.d)), _mm256_cvtepi32_ps(q), acc);
}

// acc[t] += one step's dots for the eight tokens: NJ byte dots of the
// step's weight vectors w and activation fields summed in int16, widened,
// offset, scaled and accumulated (scale_fma).
template <int NJ, class A>
[[gnu::always_inline]] inline void step_tokens(const __m256i (&w)[NJ], const A* const* y, int64_t step, __m256 wd,
                                               __m256 (&acc)[kToks]) {
#pragma GCC unroll 8
    for (int t = 0; t < kToks; ++t) {
        const A& a = y[t][step];
        __m256i s = _mm256_maddubs_epi16(w[0], load256(a.qs[0]));
#pragma GCC unroll 8
        for (int j = 1; j < NJ; ++j) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[j], load256(a.qs[j])));
        acc[t] = scale_fma(s, a, wd, acc[t]);
    }
}

// One four-block step of quad_row on the blocks b[0..3].
[[gnu::always_inline]] inline void quad_step(const BlockQ4_0* const (&b)[4], const QuadAct* const* y, int64_t iq,
                                             __m256 (&acc)[kToks]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i ab = join(b[0]->qs, b[1]->qs), cd = join(b[2]->qs, b[3]->qs);
    const __m256i lo = _mm256_unpacklo_epi64(ab, cd), hi = _mm256_unpackhi_epi64(ab, cd);
    const __m256i w[4] = {_mm256_and_si256(lo, m4), _mm256_and_si256(hi, m4),
                          _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4),
                          _mm256_and_si256(_mm256_srli_epi16(hi, 4), m4)};
    __m128i h = _mm_cvtsi32_si128(b[0]->d);
    h = _mm_insert_epi16(h, b[2]->d, 1);
    h = _mm_insert_epi16(h, b[1]->d, 2);
    h = _mm_insert_epi16(h, b[3]->d, 3);
    step_tokens(w, y, iq, _mm256_cvtph_ps(_mm_unpacklo_epi16(h, h)), acc);
}

void quad_row(int64_t nb, const BlockQ4_0* x, const QuadAct* const* y, float* out) {
    __m256 acc[kToks];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    int64_t ib = 0;
    for (; ib + 4 <= nb; ib += 4) quad_step({x + ib, x + ib + 1, x + ib + 2, x + ib + 3}, y, ib / 4, acc);
    if (ib < nb) {  // blocks past the row's end read as a zero block (scale 0), as the engine's tiles do
        static constexpr BlockQ4_0 kZero{};
        const BlockQ4_0* b[4];
        for (int k = 0; k < 4; ++k) b[k] = ib + k < nb ? x + ib + k : &kZero;
        quad_step(b, y, ib / 4, acc);
    }
    for (int t = 0; t < kToks; ++t) out[t] = hsum(acc[t]);
}

void oct_row(int64_t nb, const BlockQ4_0* x, const OctAct* const* y, const PairAct* const* tail, float* out) {
    __m256 acc[kToks];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    int64_t ib = 0;
    for (; ib + 8 <= nb; ib += 8) {
        const BlockQ4_0* b = x + ib;
        // A 4 x 4 dword transpose in each 128-bit half: u[j] holds dword j
        // (bytes 4j..4j+3) of block L in lane L.
        const __m256i r0 = join(b[0].qs, b[4].qs), r1 = join(b[1].qs, b[5].qs);
        const __m256i r2 = join(b[2].qs, b[6].qs), r3 = join(b[3].qs, b[7].qs);
        const __m256i l01 = _mm256_unpacklo_epi32(r0, r1), h01 = _mm256_unpackhi_epi32(r0, r1);
        const __m256i l23 = _mm256_unpacklo_epi32(r2, r3), h23 = _mm256_unpackhi_epi32(r2, r3);
        const __m256i u[4] = {_mm256_unpacklo_epi64(l01, l23), _mm256_unpackhi_epi64(l01, l23),
                              _mm256_unpacklo_epi64(h01, h23), _mm256_unpackhi_epi64(h01, h23)};
        __m256i w[8];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
            w[j] = _mm256_and_si256(u[j], m4);                             // elements 4j..4j+3
            w[4 + j] = _mm256_and_si256(_mm256_srli_epi16(u[j], 4), m4);  // 16 + 4j..
        }
        __m128i h = _mm_cvtsi32_si128(b[0].d);
        h = _mm_insert_epi16(h, b[1].d, 1);
        h = _mm_insert_epi16(h, b[2].d, 2);
        h = _mm_insert_epi16(h, b[3].d, 3);
        h = _mm_insert_epi16(h, b[4].d, 4);
        h = _mm_insert_epi16(h, b[5].d, 5);
        h = _mm_insert_epi16(h, b[6].d, 6);
        h = _mm_insert_epi16(h, b[7].d, 7);
        step_tokens(w, y, ib / 8, _mm256_cvtph_ps(h), acc);
    }
    if (ib < nb) {  // the two blocks left (rows of 8k + 2 blocks): [a | b] elements 0..15, then 16..31
        const __m256i ab = join(x[ib].qs, x[ib + 1].qs);
        const __m256i w0 = _mm256_and_si256(ab, m4), w1 = _mm256_and_si256(_mm256_srli_epi16(ab, 4), m4);
        const __m256 wd = _mm256_setr_ps(fp16_to_fp32(x[ib].d), 0, 0, 0, fp16_to_fp32(x[ib + 1].d), 0, 0, 0);
#pragma GCC unroll 8
        for (int t = 0; t < kToks; ++t) {
            const PairAct& a = *tail[t];
            __m256i s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(w0, load256(a.qs[0])),
                                                           _mm256_maddubs_epi16(w1, load256(a.qs[1]))),
                                          _mm256_set1_epi16(1));
            s = _mm256_add_epi32(s, _mm256_bsrli_epi128(s, 8));  // lane 0 of each half: its block's sum
            s = _mm256_add_epi32(s, _mm256_bsrli_epi128(s, 4));
            const __m256i q = _mm256_add_epi32(load256(a.neg8), s);
            acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_loadu_ps(a.d)), _mm256_cvtepi32_ps(q), acc[t]);
        }
    }
    for (int t = 0; t < kToks; ++t) out[t] = hsum(acc[t]);
}

// One shape's weights, tokens and both layouts.
struct Case {
    int64_t rows, nb;
    std::vector<BlockQ4_0> w;
    std::vector<int8_t> q;  // q[t * nb * 32 + k]
    std::vector<float> d;   // d[t * nb + block]
    std::vector<QuadAct> quads;
    std::vector<OctAct> octs;
    std::vector<PairAct> pairs;
    int8_t y(int t, int64_t blk, int e) const { return q[(t * nb + blk) * 32 + e]; }
    int32_t neg8(int t, int64_t blk, const int* elems, int n) const {
        int32_t s = 0;
        for (int i = 0; i < n; ++i) s += y(t, blk, elems[i]);
        return -8 * s;
    }
};

std::shared_ptr<Case> make_case(int64_t rows, int64_t cols) {
    auto c = std::make_shared<Case>();
    c->rows = rows;
    c->nb = cols / 32;
    std::mt19937 rng(static_cast<uint32_t>(cols));
    c->w.resize(static_cast<size_t>(rows * c->nb));
    for (BlockQ4_0& b : c->w) {
        b.d = fp32_to_fp16(0.01f + static_cast<float>(rng() % 100) * 1e-4f);
        for (uint8_t& v : b.qs) v = static_cast<uint8_t>(rng());
    }
    c->q.resize(static_cast<size_t>(kToks * cols));
    for (int8_t& v : c->q) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    c->d.resize(static_cast<size_t>(kToks * c->nb));
    for (float& v : c->d) v = 0.02f + static_cast<float>(rng() % 50) * 1e-3f;
    const int64_t nq = (c->nb + 3) / 4, no = c->nb / 8;
    c->quads.assign(static_cast<size_t>(kToks * nq), QuadAct{});
    c->octs.assign(static_cast<size_t>(kToks * no), OctAct{});
    c->pairs.assign(kToks, PairAct{});
    for (int t = 0; t < kToks; ++t) {
        for (int64_t iq = 0; iq < nq; ++iq) {
            QuadAct& a = c->quads[t * nq + iq];
            const int slot_block[4] = {0, 2, 1, 3};  // 8-byte slots: a c b d
            for (int s = 0; s < 4; ++s) {
                const int64_t blk = iq * 4 + slot_block[s];
                if (blk >= c->nb) continue;
                for (int j = 0; j < 4; ++j) {
                    for (int e = 0; e < 8; ++e) a.qs[j][8 * s + e] = c->y(t, blk, 8 * j + e);
                }
                for (int half = 0; half < 2; ++half) {  // lane: elements 8j + 4 * half + 0..3
                    int elems[16], n = 0;
                    for (int j = 0; j < 4; ++j) {
                        for (int e = 0; e < 4; ++e) elems[n++] = 8 * j + 4 * half + e;
                    }
                    a.neg8[2 * s + half] = c->neg8(t, blk, elems, n);
                    a.d[2 * s + half] = c->d[t * c->nb + blk];
                }
            }
        }
        int all[32];
        for (int e = 0; e < 32; ++e) all[e] = e;
        for (int64_t io = 0; io < no; ++io) {
            OctAct& a = c->octs[t * no + io];
            for (int lane = 0; lane < 8; ++lane) {
                const int64_t blk = io * 8 + lane;
                for (int j = 0; j < 8; ++j) {
                    for (int e = 0; e < 4; ++e) a.qs[j][4 * lane + e] = c->y(t, blk, (j < 4 ? 4 * j : 16 + 4 * (j - 4)) + e);
                }
                a.neg8[lane] = c->neg8(t, blk, all, 32);
                a.d[lane] = c->d[t * c->nb + blk];
            }
        }
        if (c->nb % 8 == 2) {
            PairAct& a = c->pairs[t];
            for (int k = 0; k < 2; ++k) {
                const int64_t blk = no * 8 + k;
                for (int e = 0; e < 16; ++e) {
                    a.qs[0][16 * k + e] = c->y(t, blk, e);
                    a.qs[1][16 * k + e] = c->y(t, blk, 16 + e);
                }
                a.neg8[4 * k] = c->neg8(t, blk, all, 32);
                a.d[4 * k] = c->d[t * c->nb + blk];
            }
        }
    }
    return c;
}

// All rows x 8 tokens in one order; out[r * 8 + t].
void run_rows(const Case& c, bool oct, float* out) {
    const int64_t nq = (c.nb + 3) / 4, no = c.nb / 8;
    const QuadAct* qa[kToks];
    const OctAct* oa[kToks];
    const PairAct* pa[kToks];
    for (int t = 0; t < kToks; ++t) {
        qa[t] = c.quads.data() + t * nq;
        oa[t] = c.octs.data() + t * no;
        pa[t] = &c.pairs[t];
    }
    for (int64_t r = 0; r < c.rows; ++r) {
        const BlockQ4_0* x = c.w.data() + r * c.nb;
        if (oct) {
            oct_row(c.nb, x, oa, pa, out + r * kToks);
        } else {
            quad_row(c.nb, x, qa, out + r * kToks);
        }
    }
}

std::string check(const Case& c, const std::vector<float>& out) {
    for (int64_t r = 0; r < c.rows; r += 17) {
        for (int t = 0; t < kToks; ++t) {
            double ref = 0;
            for (int64_t i = 0; i < c.nb; ++i) {
                const BlockQ4_0& b = c.w[r * c.nb + i];
                int64_t s = 0;
                for (int e = 0; e < 32; ++e) {
                    const int v = e < 16 ? (b.qs[e] & 0x0F) : (b.qs[e - 16] >> 4);
                    s += (v - 8) * c.y(t, i, e);
                }
                ref += static_cast<double>(fp16_to_fp32(b.d)) * c.d[t * c.nb + i] * static_cast<double>(s);
            }
            const double got = out[r * kToks + t];
            if (!(std::fabs(got - ref) <= 1e-4 * (1.0 + std::fabs(ref)))) {
                return "row " + std::to_string(r) + " token " + std::to_string(t) + ": " + std::to_string(got) +
                       " vs " + std::to_string(ref);
            }
        }
    }
    return {};
}

void bench_order(benchmark::State& state, const std::shared_ptr<Case>& c, bool oct) {
    std::vector<float> out(static_cast<size_t>(c->rows * kToks));
    run_rows(*c, oct, out.data());
    if (const std::string err = check(*c, out); !err.empty()) {
        state.SkipWithError(err.c_str());
        return;
    }
    for (auto _ : state) {
        run_rows(*c, oct, out.data());
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    const double macs = static_cast<double>(c->rows) * static_cast<double>(c->nb) * 32.0 * kToks;
    state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_sum_order_benchmarks() {
    if (best_simd_level() < SimdLevel::Avx2) return;
    // The 135M's 576-wide rows and the 1.1B's 2048-wide ones, few enough
    // rows to stay in L2 (the tiles' compute, not the memory stream).
    const struct {
        int64_t rows, cols;
    } shapes[] = {{512, 576}, {256, 2048}};
    for (const auto& s : shapes) {
        auto c = make_case(s.rows, s.cols);
        for (bool oct : {false, true}) {
            const std::string name = std::string("sum_order/") + (oct ? "oct/" : "quad/") + std::to_string(s.cols);
            benchmark::RegisterBenchmark(name.c_str(), [c, oct](benchmark::State& st) { bench_order(st, c, oct); });
        }
    }
}

}  // namespace tessera

#pragma GCC pop_options
#else
namespace tessera {
void register_sum_order_benchmarks() {}
}  // namespace tessera
#endif
