// matmul at two kernel levels (default: avx512amx against avx512vnni) in one
// process, alternated, on random weights of the shapes the benchmarks quote:
// a shared machine's drift hits both halves of a pair alike, so the median
// of the pair ratios resolves a few percent where separate processes do not.
// Checks that both levels give the same bits before it times anything.
//
// Usage: matmul_level_ab FORMAT ROWS COLS TOKENS [THREADS] [PAIRS] [LEVEL_A LEVEL_B]
//   FORMAT q4_0|q4_1|q8_0|q4_k|...; a level is a name or "best" (this CPU's
//   best); prints G multiply-adds/s for each level, the best-time ratio and
//   the median pair ratio (above 1: A faster). Two equal levels compare
//   nothing: it says so and exits 77 (CTest's skip code in CMakeLists.txt).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "tensor/quant.h"
#include "tests/unit/tensor_test_util.h"

namespace {

using tessera::GgmlType;
using tessera::SimdLevel;

bool parse_type(const char* name, GgmlType& out) {
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                       GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        std::string lower = tessera::ggml_type_name(t);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower == name) {
            out = t;
            return true;
        }
    }
    return false;
}

std::optional<SimdLevel> parse_level(const char* name) {
    if (std::strcmp(name, "best") == 0) return tessera::best_simd_level();
    return tessera::parse_simd_level(name);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s FORMAT ROWS COLS TOKENS [THREADS] [PAIRS] [LEVEL_A LEVEL_B]\n", argv[0]);
        return 2;
    }
    GgmlType type;
    SimdLevel levels[2] = {SimdLevel::Avx512Amx, SimdLevel::Avx512Vnni};
    if (!parse_type(argv[1], type)) {
        std::fprintf(stderr, "unknown format %s\n", argv[1]);
        return 2;
    }
    const int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]), n_tok = std::atoll(argv[4]);
    const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
    const int pairs = argc > 6 ? std::atoi(argv[6]) : 40;
    if (argc > 8) {
        const auto a = parse_level(argv[7]), b = parse_level(argv[8]);
        if (!a || !b) {
            std::fprintf(stderr, "unknown level\n");
            return 2;
        }
        levels[0] = *a, levels[1] = *b;
    }
    if (levels[0] == levels[1]) {
        std::fprintf(stderr, "both levels are %s: nothing to compare on this CPU\n",
                     tessera::simd_level_name(levels[0]));
        return 77;
    }
    for (SimdLevel l : levels) {
        if (l > tessera::best_simd_level()) {
            std::fprintf(stderr, "this CPU runs up to %s\n", tessera::simd_level_name(tessera::best_simd_level()));
            return 2;
        }
    }
    if (rows <= 0 || n_tok <= 0 || cols <= 0 || cols % tessera::block_elems(type) != 0 || threads < 1 || pairs < 1) {
        std::fprintf(stderr, "bad shape\n");
        return 2;
    }
    std::mt19937 rng(1);
    std::vector<uint8_t> weights;
    for (int64_t r = 0; r < rows; ++r) {
        const auto row = tessera::test::random_weight_row(rng, type, cols);
        weights.insert(weights.end(), row.begin(), row.end());
    }
    const tessera::WeightMatrix w{type, weights.data(), rows, cols, *tessera::ggml_row_bytes(type, cols)};
    const auto x = tessera::test::random_floats(rng, n_tok * cols);
    tessera::ThreadPool pool(threads);
    std::vector<uint8_t> scratch;
    std::vector<float> y[2] = {std::vector<float>(n_tok * rows), std::vector<float>(n_tok * rows)};
    for (int k = 0; k < 2; ++k) tessera::matmul(w, x.data(), n_tok, y[k].data(), pool, scratch, levels[k]);
    const bool same = std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)) == 0;
    // Calls per timing: about 2 ms of work at 100 G multiply-adds/s.
    const double macs = static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(n_tok);
    const int calls = std::max(1, static_cast<int>(2e8 / macs));
    double best[2] = {1e30, 1e30};
    std::vector<double> ratios;
    for (int p = 0; p < pairs; ++p) {
        double t[2];
        for (int k = 0; k < 2; ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int c = 0; c < calls; ++c) tessera::matmul(w, x.data(), n_tok, y[k].data(), pool, scratch, levels[k]);
            t[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls;
            best[k] = std::min(best[k], t[k]);
        }
        ratios.push_back(t[1] / t[0]);
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("%s %lld x %lld, %lld tokens, %d threads: %s %.1f, %s %.1f G multiply-adds/s; best %.3f, median %.3f; "
                "same bits: %s\n",
                tessera::ggml_type_name(type), static_cast<long long>(rows), static_cast<long long>(cols),
                static_cast<long long>(n_tok), threads, tessera::simd_level_name(levels[0]), macs / best[0] / 1e9,
                tessera::simd_level_name(levels[1]), macs / best[1] / 1e9, best[1] / best[0],
                ratios[ratios.size() / 2], same ? "yes" : "NO");
    return same ? 0 : 1;
}
