// Quantized matrix multiplication, the kernel that dominates inference time:
// y = x * W^T with W in a GGUF weight format and x in float32. The
// activations are quantized once per call into the weights' partner format
// (llama.cpp's choice), then output rows are spread over the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/ggml_type.h"
#include "kernels/dot_kernels.h"

namespace tessera {

// A view of a 2-D weight tensor as GGUF stores it: `rows` rows of `cols`
// elements, each row `row_bytes` bytes apart (normally ggml_row_bytes).
struct WeightMatrix {
    GgmlType type;
    const uint8_t* data;  // [rows, row_bytes]
    int64_t rows;
    int64_t cols;
    size_t row_bytes;
};

// y[t, r] = sum_c w[r, c] * x[t, c].
// x: [n_tok, w.cols] row-major; y: [n_tok, w.rows] row-major. w.type must be a
// supported weight type and w.cols a multiple of its block size. `scratch`
// holds the quantized activations; it is grown as needed and reused, so warm
// calls do not allocate. Results do not depend on n_tok or the thread count:
// each output is computed by the same kernel whatever the batch around it.
void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch);

// The same with an explicit kernel level (tests compare levels); `level` must
// not exceed best_simd_level().
void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch, SimdLevel level);

// Several matrices applied to the same input in one parallel region: the
// input is quantized once and all their row tiles share one work queue (Q/K/V,
// gate/up). Every matrix must have the same cols and activation type
// (can_group); each y is [n_tok, w.rows]. Results equal separate matmuls.
inline constexpr int kMaxMatmulGroup = 3;
struct MatmulOut {
    const WeightMatrix* w;
    float* y;
};
void matmul_group(std::span<const MatmulOut> outs, const float* x, int64_t n_tok, ThreadPool& pool,
                  std::vector<uint8_t>& scratch, SimdLevel level = best_simd_level());
bool can_group(const WeightMatrix& a, const WeightMatrix& b);

// out[0..n_embd) = row `row` of an embedding table stored in format t.
void embedding_row(GgmlType t, const uint8_t* table, size_t row_bytes, int64_t row, int64_t n_embd, float* out);

}  // namespace tessera
