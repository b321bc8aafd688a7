// Tiled, threaded matmul over the dot kernels. Work is cut into tasks of a
// multiple of kRowTile weight rows x a block of up to kTokBlock tokens (the
// blocks of near-equal size); each thread takes the tasks of its own
// contiguous slice in order, then helps with the others' from their ends
// (robust to busy cores); inside a task the dot kernels work on register
// tiles of up to kMaxDotRows weight rows x kMaxDotTokens tokens.
#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <span>

#include "core/cache_line_vector.h"
#include "core/check.h"
#include "kernels/act_quads.h"
#include "kernels/amx_tiles.h"
#include "kernels/convert_row.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

constexpr int64_t kRowTile = 16;
constexpr int64_t kTokBlock = 10 * kMaxDotTokens;  // tokens of a task, at most
// Tiles start at even tokens, as the ActQuad pair rows need: token blocks
// are whole tiles of kMaxDotTokens (matmul_group).
static_assert(kMaxDotTokens % 2 == 0);
constexpr int64_t kParallelQuantizeMinTokens = 8;
// Weight bytes a chunk of F16 / BF16 rows takes through a task's tokens
// (run_task): half the 1 MB L2, the rest for the widened activations.
constexpr int64_t kWidenedChunkBytes = 512 * 1024;
// Tasks per thread a matrix is cut into, at least. More balance the load on
// busy cores; fewer mean fewer fetches of the shared counter (its cache line
// moves between cores on each) and longer runs of consecutive rows for each
// core's prefetcher. Decode (one token block) was cut into 16-row tasks
// before, thousands per token, and ran slower on two threads than on one.
constexpr int64_t kTasksPerThread = 8;

// Rows per task: a multiple of kRowTile (so register tiles stay aligned and
// every output is computed the same way), large enough that the matrix still
// gives each thread kTasksPerThread tasks over all token blocks.
int64_t rows_per_task(int64_t rows, int64_t n_tok_blocks, int n_threads) {
    const int64_t wanted_row_tasks = std::max<int64_t>(1, kTasksPerThread * n_threads / n_tok_blocks);
    const int64_t tiles = (rows + kRowTile - 1) / kRowTile;
    return kRowTile * std::max<int64_t>(1, tiles / wanted_row_tasks);
}

// Each thread owns one slice of the tasks: its own counter on its own cache
// line, and consecutive tasks, so its rows stream through memory in one run
// and the weight prefetch of one task (dot_rows_x86_body.h) runs into its
// next. One counter shared by all threads handed consecutive tasks to
// alternating threads: each thread's prefetch fetched the other's rows, every
// task started cold and the counter's cache line moved between cores on each
// fetch; two threads decoded the 135M models hardly faster than one while
// the memory delivered twice the bandwidth to two threads (78 vs 40 GB/s).
constexpr int kMaxSlices = 64;  // threads beyond it share slices
// The tasks [front, back) of a slice left to run, packed into one word so
// that its owner (taking from the front) and other threads (taking from the
// back, once their own slice is done) never take the same task. Helping
// from the back leaves the owner's run of consecutive rows unbroken; helping
// from the front, two threads took alternate tasks of it at the end.
struct alignas(64) TaskSlice {
    std::atomic<uint64_t> range{0};
};

constexpr uint64_t pack_range(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) | static_cast<uint64_t>(back) << 32;
}

// Takes the slice's first (owner) or last task into `task`; false once
// the slice is empty.
bool take_task(TaskSlice& slice, bool owner, int64_t& task) {
    uint64_t r = slice.range.load(std::memory_order_relaxed);
    for (;;) {
        const auto front = static_cast<int64_t>(r & 0xFFFFFFFFu), back = static_cast<int64_t>(r >> 32);
        if (front >= back) return false;
        const uint64_t next = owner ? pack_range(front + 1, back) : pack_range(front, back - 1);
        if (slice.range.compare_exchange_weak(r, next, std::memory_order_relaxed)) {
            task = owner ? front : back - 1;
            return true;
        }
    }
}

// One weight matrix of a job; a job runs up to kMaxMatmulGroup of them that
// share the (already quantized) input.
struct MatmulPart {
    const WeightMatrix* w;
    float* y;
    MultiDotFn dot;
    RowsKernel rows;  // fn nullptr: row by row through `dot`
    AmxTilesFn amx;  // nullptr: no AMX tiles (then `rows` / `dot` take every token)
    int64_t amx_min_tokens;  // a task with fewer leaves them all to `rows` / `dot`
    int64_t task_rows;  // weight rows per task
    int64_t n_row_tiles;
    int64_t first_task;
};

struct MatmulJob {
    MatmulPart parts[kMaxMatmulGroup];
    int n_parts = 0;
    const uint8_t* act;  // [n_tok, act_stride]
    size_t act_stride;
    const uint8_t* quads = nullptr;  // [ceil(n_tok / 2), quads_stride] ActQuad pair rows, if wanted
    size_t quads_stride = 0;
    const uint8_t* widened = nullptr;  // [n_tok, widened_stride] F16 / BF16 rows as floats, if wanted
    size_t widened_stride = 0;
    const uint8_t* amx_act = nullptr;  // [n_tok, amx_stride] prepare_amx_act_row rows, if any part has AMX tiles
    size_t amx_stride = 0;
    const float* amx_scales = nullptr;  // [ceil(n_tok / 16), amx_group_floats] their block floats
    size_t amx_group_floats = 0;
    uint8_t* amx_scratch = nullptr;  // per thread, amx_scratch_bytes each: a 16-row tile's unpacked weights
    size_t amx_scratch_bytes = 0;
    int64_t n_tok;
    int64_t tok_block;  // tokens of a task (the last one's may be fewer)
    int64_t n_tasks = 0;
    TaskSlice slices[kMaxSlices];
    int n_slices = 1;
};

// Rows [r0, r1) of a part against tokens [t0, t1): whole 16-token groups
// through the AMX tiles where the part has them, 16 rows at a time; the
// rest token tile by token tile.
void run_rows(const MatmulJob& job, const MatmulPart& part, int64_t r0, int64_t r1, int64_t t0, int64_t t1,
              int thread_idx) {
    const WeightMatrix& w = *part.w;
    if (part.amx != nullptr && t1 - t0 >= part.amx_min_tokens) {
        const int64_t n_amx = (t1 - t0) / kAmxTileTokens * kAmxTileTokens;
        uint8_t* scratch = job.amx_scratch + static_cast<size_t>(thread_idx) * job.amx_scratch_bytes;
        for (int64_t r = r0; r < r1; r += kAmxTileRows) {
            const int n_rows = static_cast<int>(std::min<int64_t>(kAmxTileRows, r1 - r));
            part.amx(w.cols, w.data + static_cast<size_t>(r) * w.row_bytes, w.row_bytes, n_rows,
                     job.amx_act + static_cast<size_t>(t0) * job.amx_stride, job.amx_stride,
                     job.amx_scales + static_cast<size_t>(t0 / kAmxTileTokens) * job.amx_group_floats, n_amx,
                     part.y + t0 * w.rows + r, static_cast<size_t>(w.rows), scratch);
        }
        t0 += n_amx;
    }
    float out[kMaxDotTokens];
    for (int64_t t = t0; t < t1; t += kMaxDotTokens) {
        const int n_act = static_cast<int>(std::min<int64_t>(kMaxDotTokens, t1 - t));
        const uint8_t* act = job.act + static_cast<size_t>(t) * job.act_stride;
        if (part.rows.fn != nullptr) {
            size_t stride = job.act_stride;
            const uint8_t* a = act;
            if (part.rows.layout == ActLayout::Quads) {
                stride = job.quads_stride;
                a = job.quads + static_cast<size_t>(t / 2) * stride;  // t is even
            } else if (part.rows.layout == ActLayout::Widened) {
                stride = job.widened_stride;
                a = job.widened + static_cast<size_t>(t) * stride;
            }
            for (int64_t r = r0; r < r1; r += part.rows.max_rows) {
                const int n_rows = static_cast<int>(std::min<int64_t>(part.rows.max_rows, r1 - r));
                part.rows.fn(w.cols, w.data + static_cast<size_t>(r) * w.row_bytes, w.row_bytes, n_rows, a, stride,
                             n_act, part.y + t * w.rows + r, static_cast<size_t>(w.rows));
            }
            continue;
        }
        for (int64_t r = r0; r < r1; ++r) {
            part.dot(w.cols, w.data + static_cast<size_t>(r) * w.row_bytes, act, job.act_stride, n_act, out);
            for (int j = 0; j < n_act; ++j) part.y[(t + j) * w.rows + r] = out[j];
        }
    }
}

void run_task(const MatmulJob& job, int64_t task, int thread_idx) {
    int p = 0;
    while (p + 1 < job.n_parts && task >= job.parts[p + 1].first_task) ++p;
    const MatmulPart& part = job.parts[p];
    const WeightMatrix& w = *part.w;
    task -= part.first_task;
    const int64_t block = task / part.n_row_tiles, row_tile = task % part.n_row_tiles;
    const int64_t r0 = row_tile * part.task_rows, r1 = std::min(w.rows, r0 + part.task_rows);
    const int64_t t0 = block * job.tok_block, t1 = std::min(job.n_tok, t0 + job.tok_block);
    // F16 / BF16 rows (2 bytes a weight) go through all the task's tokens a
    // chunk of rows at a time, so each token tile reads them from L2, not
    // from memory (1.1B BF16 pp512 +4%; every output computed as before).
    const bool chunked = part.rows.fn != nullptr && part.rows.layout == ActLayout::Widened;
    const int64_t fit = kWidenedChunkBytes / static_cast<int64_t>(w.row_bytes) / kRowTile * kRowTile;
    const int64_t chunk_rows = chunked ? std::max(kRowTile, fit) : r1 - r0;
    for (int64_t c0 = r0; c0 < r1; c0 += chunk_rows) {
        run_rows(job, part, c0, std::min(r1, c0 + chunk_rows), t0, t1, thread_idx);
    }
}

// Runs the tasks of the thread's own slice from its front, then what is
// left of the others' from their backs.
void worker(MatmulJob* job, int thread_idx) {
    const int n = job->n_slices;
    for (int k = 0; k < n; ++k) {
        TaskSlice& slice = job->slices[(thread_idx + k) % n];
        int64_t task = 0;
        while (take_task(slice, k == 0, task)) run_task(*job, task, thread_idx);
    }
}

// Cuts [0, n_tasks) into one contiguous slice per thread.
void slice_tasks(MatmulJob& job, int n_threads) {
    TS_CHECK(job.n_tasks < (int64_t{1} << 32));
    job.n_slices = static_cast<int>(std::min<int64_t>({n_threads, kMaxSlices, std::max<int64_t>(job.n_tasks, 1)}));
    for (int i = 0; i < job.n_slices; ++i) {
        job.slices[i].range.store(pack_range(job.n_tasks * i / job.n_slices, job.n_tasks * (i + 1) / job.n_slices),
                                  std::memory_order_relaxed);
    }
}

// Bytes from p to the first cache-line boundary at or after it.
size_t bytes_to_next_line(const uint8_t* p) {
    return (kCacheLineBytes - reinterpret_cast<uintptr_t>(p) % kCacheLineBytes) % kCacheLineBytes;
}

// What quantize_activations lays out after the quantized rows.
struct ActExtras {
    bool quads = false;    // ActQuad pair rows
    bool widened = false;  // F16 / BF16 rows widened back to floats
    bool amx = false;      // prepare_amx_act_row rows and floats, one AMX weight scratch per thread
    size_t amx_scratch_bytes = 0;  // of each thread (the largest any part needs)
    int n_threads = 1;
};

// Quantizes the n_tok rows of x into scratch, followed by the regions
// `extras` asks for, each on a cache line; sets the strides and pointers of
// `job`.
void quantize_activations(GgmlType act_type, const ActExtras& extras, SimdLevel level, const float* x,
                          int64_t n_tok, int64_t cols, std::vector<uint8_t>& scratch, ThreadPool& pool,
                          MatmulJob& job) {
    const auto row_bytes = ggml_row_bytes(act_type, cols);
    TS_CHECK(row_bytes.has_value());
    const bool quads = extras.quads, widened = extras.widened, amx = extras.amx;
    TS_CHECK(!widened || ((act_type == GgmlType::F16 || act_type == GgmlType::BF16) && !quads));
    TS_CHECK(!amx || act_type == GgmlType::Q8_0 || act_type == GgmlType::Q8_1 || act_type == GgmlType::Q8_K);
    const size_t stride = *row_bytes, quads_stride = quads ? act_quad_pairs_bytes(act_type, cols) : 0;
    const size_t widened_stride = widened ? static_cast<size_t>(cols) * sizeof(float) : 0;
    const size_t amx_stride = amx ? amx_act_row_bytes(act_type, cols) : 0;
    const size_t amx_group_floats = amx ? amx_scale_floats(act_type, cols) : 0;
    const size_t amx_groups = static_cast<size_t>((n_tok + kAmxTileTokens - 1) / kAmxTileTokens);
    const size_t amx_scratch_bytes = amx ? extras.amx_scratch_bytes : 0;
    // Each region starts on a cache line: the AVX-512 tiles load the pair
    // rows (and widened rows) in 64-byte fields, each of which straddled two
    // lines when they followed the quantized rows directly (Q4_K pp512 tile
    // 20% slower); the AMX weight scratch takes aligned 64-byte stores.
    const size_t act_bytes = stride * static_cast<size_t>(n_tok);
    const size_t lens[] = {quads_stride * static_cast<size_t>((n_tok + 1) / 2) +
                               widened_stride * static_cast<size_t>(n_tok),
                           amx_stride * static_cast<size_t>(n_tok), amx_group_floats * amx_groups * sizeof(float),
                           amx_scratch_bytes * static_cast<size_t>(extras.n_threads)};
    size_t need = act_bytes;
    for (size_t len : lens) need += len > 0 ? kCacheLineBytes - 1 + len : 0;
    if (scratch.size() < need) scratch.resize(need);
    uint8_t* base = scratch.data();
    uint8_t* regions[4] = {};
    uint8_t* next = base + act_bytes;
    for (int i = 0; i < 4; ++i) {
        if (lens[i] == 0) continue;
        regions[i] = next + bytes_to_next_line(next);
        next = regions[i] + lens[i];
    }
    uint8_t* extra = regions[0];
    const ConvertRowFn convert = find_convert_row(act_type, level);  // the bytes of quantize_row
    const WidenRowFn widen = widened ? find_widen_row(act_type, level) : nullptr;
    auto quantize_rows = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            uint8_t* row = base + static_cast<size_t>(t) * stride;
            convert(x + t * cols, row, cols);
            if (quads) {
                prepare_act_quads(act_type, cols, row, static_cast<int>(t % 2),
                                  extra + static_cast<size_t>(t / 2) * quads_stride, level);
            }
            if (widened) {
                widen(row, reinterpret_cast<float*>(extra + static_cast<size_t>(t) * widened_stride), cols);
            }
            if (amx) {
                float* group = reinterpret_cast<float*>(regions[2]) +
                               static_cast<size_t>(t / kAmxTileTokens) * amx_group_floats;
                prepare_amx_act_row(act_type, row, cols, regions[1] + static_cast<size_t>(t) * amx_stride, group,
                                    static_cast<int>(t % kAmxTileTokens));
            }
        }
    };
    if (n_tok >= kParallelQuantizeMinTokens) {
        pool.parallel_for(n_tok, quantize_rows);
    } else {
        quantize_rows(0, n_tok);
    }
    job.act = base;
    job.act_stride = stride;
    job.quads = quads ? extra : nullptr;
    job.quads_stride = quads_stride;
    job.widened = widened ? extra : nullptr;
    job.widened_stride = widened_stride;
    job.amx_act = regions[1];
    job.amx_stride = amx_stride;
    job.amx_scales = reinterpret_cast<const float*>(regions[2]);
    job.amx_group_floats = amx_group_floats;
    job.amx_scratch = regions[3];
    job.amx_scratch_bytes = amx_scratch_bytes;
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch) {
    matmul(w, x, n_tok, y, pool, scratch, best_simd_level());
}

void matmul(const WeightMatrix& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            std::vector<uint8_t>& scratch, SimdLevel level) {
    const MatmulOut one{&w, y};
    matmul_group(std::span(&one, 1), x, n_tok, pool, scratch, level);
}

void matmul_group(std::span<const MatmulOut> outs, const float* x, int64_t n_tok, ThreadPool& pool,
                  std::vector<uint8_t>& scratch, SimdLevel level) {
    TS_CHECK(!outs.empty() && outs.size() <= static_cast<size_t>(kMaxMatmulGroup) && n_tok >= 0);
    const WeightMatrix& w0 = *outs[0].w;
    const GgmlType act_type = activation_type_for(w0.type);
    for (const MatmulOut& o : outs) {
        TS_CHECK(is_supported_weight_type(o.w->type));
        TS_CHECK(o.w->cols % block_elems(o.w->type) == 0 && o.w->rows >= 0);
        TS_CHECK(o.w->cols == w0.cols && activation_type_for(o.w->type) == act_type);
    }
    if (n_tok == 0) return;
    MatmulJob job;
    job.n_tok = n_tok;
    // Token blocks of near-equal size, as many as the threads or a multiple:
    // 512 tokens on two threads were six blocks of 80 and one of 32, and
    // the thread whose slice held the short one waited at the end of every
    // matmul.
    // With AMX tiles, blocks are whole 16-token groups where they can be.
    auto amx_for = [&](const WeightMatrix& w) {
        return n_tok >= amx_min_tokens(w.type) ? find_amx_tiles(w.type, level) : nullptr;
    };
    bool any_amx = false;
    for (const MatmulOut& o : outs) any_amx = any_amx || amx_for(*o.w) != nullptr;
    const int64_t tok_tile = any_amx ? kAmxTileTokens : kMaxDotTokens;
    int64_t n_tok_blocks = (n_tok + kTokBlock - 1) / kTokBlock;
    if (n_tok_blocks > 1) n_tok_blocks = (n_tok_blocks + pool.size() - 1) / pool.size() * pool.size();
    job.tok_block = (n_tok + n_tok_blocks - 1) / n_tok_blocks;
    job.tok_block = (job.tok_block + tok_tile - 1) / tok_tile * tok_tile;  // whole tiles
    n_tok_blocks = (n_tok + job.tok_block - 1) / job.tok_block;
    // Tokens the AMX tiles leave (a block's last tokens short of 16, a block
    // short of amx_min_tokens) go through the VNNI tiles, which want their
    // pair rows.
    const int64_t last_block = n_tok - (n_tok_blocks - 1) * job.tok_block;
    auto amx_takes_all = [&](int64_t min_tokens) {
        auto whole = [&](int64_t tokens) { return tokens % kAmxTileTokens == 0 && tokens >= min_tokens; };
        return whole(job.tok_block) && whole(last_block);
    };
    ActExtras extras;
    extras.n_threads = pool.size();
    for (const MatmulOut& o : outs) {
        MatmulPart& part = job.parts[job.n_parts++];
        part.w = o.w;
        part.y = o.y;
        part.dot = find_multi_dot(o.w->type, level);
        part.rows = find_rows_dot(o.w->type, level);
        part.amx = amx_for(*o.w);
        part.amx_min_tokens = amx_min_tokens(o.w->type);
        if (part.amx != nullptr) {
            extras.amx = true;
            const size_t bytes = amx_weight_scratch_bytes(o.w->type, o.w->cols);
            extras.amx_scratch_bytes = std::max(extras.amx_scratch_bytes, bytes);
        }
        const bool all_by_amx = part.amx != nullptr && amx_takes_all(part.amx_min_tokens);
        extras.quads = extras.quads || (part.rows.fn != nullptr && part.rows.layout == ActLayout::Quads && !all_by_amx);
        extras.widened = extras.widened || (part.rows.fn != nullptr && part.rows.layout == ActLayout::Widened);
        part.task_rows = rows_per_task(o.w->rows, n_tok_blocks, pool.size());
        part.n_row_tiles = (o.w->rows + part.task_rows - 1) / part.task_rows;
        part.first_task = job.n_tasks;
        job.n_tasks += part.n_row_tiles * n_tok_blocks;
    }
    if (act_type == GgmlType::F32) {  // float activations are used in place
        job.act = reinterpret_cast<const uint8_t*>(x);
        job.act_stride = static_cast<size_t>(w0.cols) * sizeof(float);
    } else {
        quantize_activations(act_type, extras, level, x, n_tok, w0.cols, scratch, pool, job);
    }
    if (job.n_tasks == 0) return;
    if (job.n_tasks == 1 || pool.size() == 1) {
        slice_tasks(job, 1);
        worker(&job, 0);
        return;
    }
    slice_tasks(job, pool.size());
    MatmulJob* job_ptr = &job;
    pool.run([job_ptr](int idx, int) { worker(job_ptr, idx); });
}

bool can_group(const WeightMatrix& a, const WeightMatrix& b) {
    return a.cols == b.cols && activation_type_for(a.type) == activation_type_for(b.type);
}

void embedding_row(GgmlType t, const uint8_t* table, size_t row_bytes, int64_t row, int64_t n_embd, float* out) {
    TS_CHECK(row >= 0);
    dequantize_row(t, table + static_cast<size_t>(row) * row_bytes, out, n_embd);
}

}  // namespace tessera
