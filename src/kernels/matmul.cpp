// Tiled, threaded matmul over the dot kernels. Work is cut into tasks of
// kRowTile weight rows x kTokBlock tokens, handed out through an atomic
// counter (robust to busy cores); inside a task the dot kernels work on
// register tiles of up to kMaxDotRows weight rows x kMaxDotTokens tokens.
#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>

#include "core/check.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

constexpr int64_t kRowTile = 16;
constexpr int64_t kTokBlock = 64;
constexpr int64_t kParallelQuantizeMinTokens = 8;

struct MatmulJob {
    const WeightMatrix* w;
    const uint8_t* act;  // [n_tok, act_stride]
    size_t act_stride;
    int64_t n_tok;
    float* y;
    MultiDotFn dot;
    RowsDotFn rows_dot;  // nullptr: row by row through `dot`
    int64_t n_row_tiles;
    int64_t n_tasks;
    std::atomic<int64_t> next_task{0};
};

void run_task(const MatmulJob& job, int64_t task) {
    const int64_t tok_block = task / job.n_row_tiles, row_tile = task % job.n_row_tiles;
    const int64_t r0 = row_tile * kRowTile, r1 = std::min(job.w->rows, r0 + kRowTile);
    const int64_t t0 = tok_block * kTokBlock, t1 = std::min(job.n_tok, t0 + kTokBlock);
    float out[kMaxDotTokens];
    for (int64_t t = t0; t < t1; t += kMaxDotTokens) {
        const int n_act = static_cast<int>(std::min<int64_t>(kMaxDotTokens, t1 - t));
        const uint8_t* act = job.act + static_cast<size_t>(t) * job.act_stride;
        if (job.rows_dot != nullptr) {
            for (int64_t r = r0; r < r1; r += kMaxDotRows) {
                const int n_rows = static_cast<int>(std::min<int64_t>(kMaxDotRows, r1 - r));
                job.rows_dot(job.w->cols, job.w->data + static_cast<size_t>(r) * job.w->row_bytes, job.w->row_bytes,
                             n_rows, act, job.act_stride, n_act, job.y + t * job.w->rows + r,
                             static_cast<size_t>(job.w->rows));
            }
            continue;
        }
        for (int64_t r = r0; r < r1; ++r) {
            job.dot(job.w->cols, job.w->data + static_cast<size_t>(r) * job.w->row_bytes, act, job.act_stride,
                    n_act, out);
            for (int j = 0; j < n_act; ++j) job.y[(t + j) * job.w->rows + r] = out[j];
        }
    }
}

void worker(MatmulJob* job) {
    for (;;) {
        const int64_t task = job->next_task.fetch_add(1, std::memory_order_relaxed);
        if (task >= job->n_tasks) return;
        run_task(*job, task);
    }
}

// Quantizes the n_tok rows of x into scratch; returns the row stride in bytes.
size_t quantize_activations(GgmlType act_type, const float* x, int64_t n_tok, int64_t cols, ThreadPool& pool,
                            std::vector<uint8_t>& scratch) {
    const auto row_bytes = ggml_row_bytes(act_type, cols);
    TS_CHECK(row_bytes.has_value());
    const size_t need = *row_bytes * static_cast<size_t>(n_tok);
    if (scratch.size() < need) scratch.resize(need);
    uint8_t* base = scratch.data();
    const size_t stride = *row_bytes;
    auto quantize_rows = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            quantize_row(act_type, x + t * cols, base + static_cast<size_t>(t) * stride, cols);
        }
    };
    if (n_tok >= kParallelQuantizeMinTokens) {
        pool.parallel_for(n_tok, quantize_rows);
    } else {
        quantize_rows(0, n_tok);
    }
    return stride;
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch) {
    matmul(w, x, n_tok, y, pool, scratch, best_simd_level());
}

void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch, SimdLevel level) {
    TS_CHECK(is_supported_weight_type(w.type));
    TS_CHECK(w.cols % block_elems(w.type) == 0 && w.rows >= 0 && n_tok >= 0);
    if (n_tok == 0 || w.rows == 0) return;
    const GgmlType act_type = activation_type_for(w.type);
    MatmulJob job;
    job.w = &w;
    if (act_type == GgmlType::F32) {  // float activations are used in place
        job.act = reinterpret_cast<const uint8_t*>(x);
        job.act_stride = static_cast<size_t>(w.cols) * sizeof(float);
    } else {
        job.act_stride = quantize_activations(act_type, x, n_tok, w.cols, pool, scratch);
        job.act = scratch.data();
    }
    job.n_tok = n_tok;
    job.y = y;
    job.dot = find_multi_dot(w.type, level);
    job.rows_dot = find_rows_dot(w.type, level);
    job.n_row_tiles = (w.rows + kRowTile - 1) / kRowTile;
    job.n_tasks = job.n_row_tiles * ((n_tok + kTokBlock - 1) / kTokBlock);
    if (job.n_tasks == 1 || pool.size() == 1) {
        worker(&job);
        return;
    }
    MatmulJob* job_ptr = &job;
    pool.run([job_ptr](int, int) { worker(job_ptr); });
}

void embedding_row(GgmlType t, const uint8_t* table, size_t row_bytes, int64_t row, int64_t n_embd, float* out) {
    TS_CHECK(row >= 0);
    dequantize_row(t, table + static_cast<size_t>(row) * row_bytes, out, n_embd);
}

}  // namespace tessera
