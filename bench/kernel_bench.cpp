// Kernel micro-benchmark (Google Benchmark): the matmul's inner loop over
// one prompt task: the tiled dot kernel of a weight format (or, where its
// level has none, the multi-token dot row by row) on `rows` x `cols`
// weights against 80 tokens of prepared activations, as kernels/matmul.cpp
// runs it (8-token tiles, the kernel's row groups), on one thread
// (task_loop/...); and one decode token through the one-token tiles on the
// first rows of the same weights, few enough to stay in L2 (decode/...):
// the decode tiles' compute speed without the memory stream a real decode
// adds, which on a shared machine is steadier to compare than `tessera
// bench`. Reports multiply-adds per second of CPU time, the figure
// docs/BENCHMARKS.md quotes for kernels.
//
// Without a model, the legacy formats (and F16, BF16) run on weights
// quantized from random normal values: real blocks, never random bytes,
// whose NaN and huge sums once made a K-quant kernel look 40% slower than
// it ran on a model; so do Q2_K, Q3_K, Q4_K, IQ4_NL, IQ4_XS and MXFP4 on
// 2048-wide rows. Every K-quant also runs with --model PATH:
// every distinct 2-D weight of the model's first layer, and the output
// head, on the model's own bytes. Without a model it also runs the
// attention benchmarks of bench/attention_bench.cpp.
//
// Before timing, each benchmark checks its outputs against the scalar
// reference (vec_dot) and fails if one is off, so a broken kernel cannot
// report a speed.
//
//   build/kernel_bench [--model M.gguf] [--benchmark_filter=REGEX] ...
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/attention_bench.h"
#include "bench/sum_order_bench.h"
#include "gguf/gguf_file.h"
#include "kernels/act_quads.h"
#include "kernels/convert_row.h"
#include "kernels/dot_kernels.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

constexpr int kTokens = 10 * kMaxDotTokens;  // a prompt task's token block (matmul.cpp's kTokBlock)
// Weight bytes of a decode benchmark, at most: well inside a 512 KiB L2.
constexpr int64_t kDecodeBytes = 192 * 1024;
constexpr int64_t kRowTile = 16;  // matmul.cpp's: task rows come in multiples of it

// Weights of one benchmark: a row-major matrix in its GGUF format.
struct Weights {
    GgmlType type = GgmlType::Q4_0;
    int64_t rows = 0, cols = 0;
    size_t row_bytes = 0;
    const uint8_t* data = nullptr;
    std::shared_ptr<std::vector<uint8_t>> owned;  // synthetic weights
};

// The activations the kernel reads for kTokens tokens: quantized rows and,
// where the kernel wants them, their ActQuad pair rows or (F16) the rows
// widened to floats.
struct Activations {
    std::vector<uint8_t> rows, quads_buf;
    const uint8_t* quads = nullptr;  // 64-byte aligned inside quads_buf
    std::vector<float> widened;
    size_t row_stride = 0, quads_stride = 0;
};

Activations make_activations(GgmlType weight, int64_t cols, ActLayout layout, std::mt19937& rng) {
    const GgmlType at = activation_type_for(weight);
    Activations a;
    a.row_stride = *ggml_row_bytes(at, cols);
    a.rows.resize(a.row_stride * kTokens);
    std::normal_distribution<float> normal;
    std::vector<float> x(static_cast<size_t>(cols));
    for (int t = 0; t < kTokens; ++t) {
        for (float& v : x) v = normal(rng);
        quantize_row(at, x.data(), a.rows.data() + t * a.row_stride, cols);
    }
    if (layout == ActLayout::Widened) {
        a.widened.resize(static_cast<size_t>(cols) * kTokens);
        for (int t = 0; t < kTokens; ++t) {
            find_widen_row(at)(a.rows.data() + t * a.row_stride, a.widened.data() + t * cols, cols);  // as the matmul
        }
    }
    if (layout == ActLayout::Quads) {
        const size_t qb = act_quad_pairs_bytes(at, cols);
        a.quads_stride = qb;
        a.quads_buf.resize(qb * (kTokens / 2) + 64);
        const auto misalign = reinterpret_cast<uintptr_t>(a.quads_buf.data()) % 64;
        uint8_t* pairs = a.quads_buf.data() + (64 - misalign) % 64;
        for (int t = 0; t < kTokens; ++t) {
            prepare_act_quads(at, cols, a.rows.data() + t * a.row_stride, t % 2, pairs + t / 2 * qb,
                              SimdLevel::Scalar);
        }
        a.quads = pairs;
    }
    return a;
}

// The kernels the matmul picks for a format: the tiled one, or where the
// level has none, the multi-token dot row by row.
struct Kernels {
    RowsKernel rows;
    MultiDotFn dot = nullptr;
};

// One pass of the matmul's task loop over the first n_tok tokens: y[t *
// rows + r] for all rows and those tokens.
void run_loop(const Kernels& kernels, const Weights& w, const Activations& a, int n_tok, float* y) {
    const RowsKernel& k = kernels.rows;
    for (int t = 0; t < n_tok; t += kMaxDotTokens) {
        const int n_act = std::min(kMaxDotTokens, n_tok - t);
        size_t stride = a.row_stride;
        const uint8_t* act = a.rows.data() + t * a.row_stride;
        if (k.fn != nullptr && k.layout == ActLayout::Quads) {
            stride = a.quads_stride;
            act = a.quads + t / 2 * stride;
        } else if (k.fn != nullptr && k.layout == ActLayout::Widened) {
            stride = static_cast<size_t>(w.cols) * sizeof(float);
            act = reinterpret_cast<const uint8_t*>(a.widened.data() + t * w.cols);
        }
        if (k.fn == nullptr) {
            float out[kMaxDotTokens];
            for (int64_t r = 0; r < w.rows; ++r) {
                kernels.dot(w.cols, w.data + r * w.row_bytes, act, stride, n_act, out);
                for (int j = 0; j < n_act; ++j) y[(t + j) * w.rows + r] = out[j];
            }
            continue;
        }
        for (int64_t r = 0; r < w.rows; r += k.max_rows) {
            const int n_rows = static_cast<int>(std::min<int64_t>(k.max_rows, w.rows - r));
            k.fn(w.cols, w.data + r * w.row_bytes, w.row_bytes, n_rows, act, stride, n_act, y + t * w.rows + r,
                 static_cast<size_t>(w.rows));
        }
    }
}

// Empty when every output is within float tolerance of the scalar
// reference; otherwise what is wrong.
std::string check_against_reference(const Weights& w, const Activations& a, int n_tok, const std::vector<float>& y) {
    for (int t = 0; t < n_tok; t += 7) {  // a spread of tokens and rows, not all: the reference is slow
        for (int64_t r = 0; r < w.rows; r += 13) {
            const float ref = vec_dot(w.type, w.cols, w.data + r * w.row_bytes, a.rows.data() + t * a.row_stride);
            const float got = y[static_cast<size_t>(t * w.rows + r)];
            if (!(std::fabs(got - ref) <= 1e-4f * std::fabs(ref) + 1e-3f)) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "token %d row %lld: kernel %g, reference %g", t,
                              static_cast<long long>(r), static_cast<double>(got), static_cast<double>(ref));
                return msg;
            }
        }
    }
    return {};
}

// The task loop over n_tok tokens (kTokens: a prompt task; 1: decode).
void bench_rows(benchmark::State& state, const Weights& w, int n_tok) {
    const Kernels k{find_rows_dot(w.type, best_simd_level()), find_multi_dot(w.type, best_simd_level())};
    std::mt19937 rng(7);
    const ActLayout layout = k.rows.fn != nullptr ? k.rows.layout : ActLayout::Quantized;
    const Activations a = make_activations(w.type, w.cols, layout, rng);
    std::vector<float> y(static_cast<size_t>(n_tok * w.rows));
    run_loop(k, w, a, n_tok, y.data());
    if (const std::string err = check_against_reference(w, a, n_tok, y); !err.empty()) {
        state.SkipWithError(err.c_str());
        return;
    }
    for (auto _ : state) {
        run_loop(k, w, a, n_tok, y.data());
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    const double macs = static_cast<double>(w.rows) * static_cast<double>(w.cols) * n_tok;
    state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
}

// The first rows of w that fit kDecodeBytes (whole row tiles, at least one).
Weights decode_rows(Weights w) {
    const int64_t fit = kDecodeBytes / static_cast<int64_t>(w.row_bytes) / kRowTile * kRowTile;
    w.rows = std::min(w.rows, std::max(kRowTile, fit));
    return w;
}

// A prompt-task benchmark named `task_name` and a decode one named
// decode_prefix + TYPE/ROWSxCOLS (its rows cut by decode_rows) for one
// weight matrix; `keep` holds a mapped file the weights point into.
void register_both(const std::string& task_name, const std::string& decode_prefix, const Weights& w,
                   const std::shared_ptr<const void>& keep) {
    benchmark::RegisterBenchmark(task_name.c_str(), [w, keep](benchmark::State& st) { bench_rows(st, w, kTokens); });
    const Weights d = decode_rows(w);
    const std::string decode_name = decode_prefix + ggml_type_name(d.type) + "/" + std::to_string(d.rows) + "x" +
                                    std::to_string(d.cols);
    benchmark::RegisterBenchmark(decode_name.c_str(), [d, keep](benchmark::State& st) { bench_rows(st, d, 1); });
}

// Legacy-format (or F16 / BF16) weights from random normal values.
Weights synthetic_weights(GgmlType type, int64_t rows, int64_t cols) {
    Weights w;
    w.type = type;
    w.rows = rows;
    w.cols = cols;
    w.row_bytes = *ggml_row_bytes(type, cols);
    w.owned = std::make_shared<std::vector<uint8_t>>(w.row_bytes * rows);
    std::mt19937 rng(static_cast<uint32_t>(rows * 31 + cols));
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> x(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
        for (float& v : x) v = normal(rng);
        quantize_row_weights(type, x.data(), w.owned->data() + r * w.row_bytes, cols);
    }
    w.data = w.owned->data();
    return w;
}

void register_synthetic() {
    // The shapes docs/BENCHMARKS.md quotes: rows 2048 wide (the 1.1B's
    // attention and FFN inputs) and 576 wide (the 135M's, 18 blocks a row).
    const struct {
        int64_t rows, cols;
    } shapes[] = {{576, 2048}, {1536, 576}};
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::F16,
                       GgmlType::BF16}) {
        for (const auto& s : shapes) {
            const std::string name = std::string("task_loop/") + ggml_type_name(t) + "/" + std::to_string(s.rows) +
                                     "x" + std::to_string(s.cols);
            const Weights w = synthetic_weights(t, s.rows, s.cols);
            register_both(name, "decode/", w, nullptr);  // w.owned holds the weights
        }
    }
    // The formats with one-row kernels only (dot_lowbit_x86_body.h), and
    // Q4_K's tiles beside them, on the 2048-wide rows (whole super-blocks).
    for (GgmlType t : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                       GgmlType::MXFP4}) {
        const std::string name = std::string("task_loop/") + ggml_type_name(t) + "/576x2048";
        register_both(name, "decode/", synthetic_weights(t, 576, 2048), nullptr);
    }
}

// The model's first-layer matrices and output head, one benchmark per
// distinct (type, shape). The file stays mapped for the whole run.
bool register_model(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) {
        std::fprintf(stderr, "kernel_bench: %s: %s\n", path.c_str(), file.status().message().c_str());
        return false;
    }
    auto shared = std::make_shared<GgufFile>(std::move(*file));
    std::vector<std::string> seen;
    for (const GgufTensorInfo& ti : shared->tensors()) {
        const bool wanted = ti.name.rfind("blk.0.", 0) == 0 || ti.name == "output.weight";
        if (!wanted || ti.n_dims != 2 || !is_supported_weight_type(ti.type)) continue;
        const std::string key = std::string(ggml_type_name(ti.type)) + "/" + std::to_string(ti.ne[1]) + "x" +
                                std::to_string(ti.ne[0]);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        Weights w;
        w.type = ti.type;
        w.rows = ti.ne[1];
        w.cols = ti.ne[0];
        w.row_bytes = *ggml_row_bytes(ti.type, ti.ne[0]);
        w.data = ti.data;
        register_both("model/" + ti.name + "/" + key, "model_decode/" + ti.name + "/", w, shared);
    }
    return true;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
    // --model PATH is ours; every other flag goes to Google Benchmark.
    std::string model;
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model = argv[++i];
        } else if (std::strncmp(argv[i], "--model=", 8) == 0) {
            model = argv[i] + 8;
        } else {
            argv[out++] = argv[i];
        }
    }
    argc = out;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (model.empty()) {
        tessera::register_synthetic();
        tessera::register_attention_benchmarks();
        tessera::register_sum_order_benchmarks();
    } else if (!tessera::register_model(model)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
