// Streaming-softmax attention, one block of keys at a time: scores for the
// block, then one rescale of the running sum; K/V rows stay in their storage
// type in the cache. attend_head is the scalar
// reference; attention_batch plans GQA-grouped, context-split work pieces,
// runs a (SIMD) range kernel on each and merges the split pieces.
#include "kernels/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "kernels/cpu/attn_x86.h"
#include "tensor/kv_type.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Tokens of one piece: kMaxRowsPerPiece / (query heads per KV head), at most
// kMaxTokensPerPiece. Each K/V row is read from memory once per piece and
// from L1 for the piece's other tokens.
constexpr int kMaxRowsPerPiece = 32;
constexpr int kMaxTokensPerPiece = 8;
// Fewer whole-row pieces than this per thread and pieces split by KV head.
constexpr int64_t kMinPiecesPerThread = 2;
// Contexts are cut at fixed multiples of this many positions (rounded up to
// whole blocks) and the pieces merged, so long single-sequence decodes spread
// over all cores, and a row's result depends only on its own context, never
// on the batch around it or the thread count.
constexpr int64_t kSplitPositions = 512;
// ModelConfig caps head_dim here; the scalar paths decode one row into a
// buffer this long.
constexpr int kMaxHeadDim = 1024;

float dot(const float* q, const float* k, int n) {
    float sum = 0.0f;
    for (int d = 0; d < n; ++d) sum += q[d] * k[d];
    return sum;
}

// One attention logit: the scaled dot product, soft-capped when the shape says so.
float score(const AttentionShape& s, const float* q, const float* k) {
    const float x = dot(q, k, s.head_dim) * s.scale;
    return s.softcap > 0.0f ? s.softcap * std::tanh(x / s.softcap) : x;
}

// First position a query that sees positions < ctx_end attends to.
int64_t window_start(const AttentionShape& s, int64_t ctx_end) {
    return s.window > 0 ? std::max<int64_t>(0, ctx_end - s.window) : 0;
}

// One head's slice of the V row at `slot`, decoded to floats: the reference
// conversion the SIMD kernels' in-register loads must match.
void load_v_head(const PagedKv& kv, int64_t slot, int kv_head, int hd, float* dst) {
    const int64_t head_offset = kv_row_bytes(kv.v_type, static_cast<int64_t>(kv_head) * hd);
    dequantize_row(kv.v_type, kv.v_pool + slot * kv.v_row_bytes + head_offset, dst, hd);
}

// The same for K: the head's bytes of the key at `slot` gathered back from
// its keys-in-lanes block into row layout, then decoded.
void load_k_head(const PagedKv& kv, int64_t slot, int kv_head, int hd, float* dst) {
    const int64_t block = slot / kv.block_size;
    const uint8_t* block_bytes = kv.k_pool + block * kv.block_size * kv.k_row_bytes;
    uint8_t row[kMaxHeadDim * 4];
    gather_k_row(kv.k_type, block_bytes, kv_row_bytes(kv.k_type, static_cast<int64_t>(kv_head) * hd),
                 kv_row_bytes(kv.k_type, hd), kv.block_size, static_cast<int>(slot % kv.block_size), row);
    dequantize_row(kv.k_type, row, dst, hd);
}

// A row's softmax denominator: its sum l of exp(score - m), plus
// exp(sink - m) when the shape has attention sinks.
float denominator(const AttentionShape& s, int head, float l, float m) {
    return s.sinks ? l + std::exp(s.sinks[head] - m) : l;
}

void attend_kv_head(const AttentionShape& s, const PagedKv& kv, const float* q, int head, int64_t n_ctx,
                    float* out) {
    const int kv_head = head / (s.n_head / s.n_head_kv);
    const int hd = s.head_dim;
    float running_max = kNegInf;
    float running_sum = 0.0f;
    std::fill(out, out + hd, 0.0f);
    float scores[256];
    float row[kMaxHeadDim];
    const int64_t first = window_start(s, n_ctx);
    for (int64_t start = first / kv.block_size * kv.block_size; start < n_ctx; start += kv.block_size) {
        const int n = static_cast<int>(std::min<int64_t>(kv.block_size, n_ctx - start));
        const int64_t slot0 = kv.block_table[start / kv.block_size];
        float block_max = kNegInf;
        for (int j = 0; j < n; ++j) {
            if (start + j < first) {  // slid out of the window
                scores[j] = kNegInf;
                continue;
            }
            load_k_head(kv, slot0 + j, kv_head, hd, row);
            scores[j] = score(s, q, row);
            block_max = std::max(block_max, scores[j]);
        }
        const float new_max = std::max(running_max, block_max);
        const float correction = std::exp(running_max - new_max);
        running_sum *= correction;
        for (int d = 0; d < hd; ++d) out[d] *= correction;
        for (int j = 0; j < n; ++j) {
            if (scores[j] == kNegInf) continue;
            const float p = std::exp(scores[j] - new_max);
            running_sum += p;
            load_v_head(kv, slot0 + j, kv_head, hd, row);
            for (int d = 0; d < hd; ++d) out[d] += p * row[d];
        }
        running_max = new_max;
    }
    running_sum = denominator(s, head, running_sum, running_max);
    const float inv = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
    for (int d = 0; d < hd; ++d) out[d] *= inv;
}

// The range kernel in plain C++: the same block-at-a-time algorithm as the
// SIMD versions, one query row at a time.
void attend_range_scalar(const AttentionShape& s, const PagedKv& kv, const AttnRange& r) {
    const int hd = s.head_dim, per_tok = r.n_kv_heads * r.group, rows = r.n_tok * per_tok;
    std::fill(r.acc, r.acc + static_cast<int64_t>(rows) * hd, 0.0f);
    std::fill(r.m, r.m + rows, kNegInf);
    std::fill(r.l, r.l + rows, 0.0f);
    float scores[256];
    float row_buf[kMaxHeadDim];
    for (int64_t start = r.p0; start < r.p1;) {
        const int64_t block = start / kv.block_size;
        const int64_t end = std::min(r.p1, (block + 1) * kv.block_size);
        const int64_t slot0 = kv.block_table[block] - block * kv.block_size;
        for (int row = 0; row < rows; ++row) {
            const int i = row / per_tok, hg = row % per_tok, kv_head = r.kv_head + hg / r.group;
            const int64_t row_end = std::min(end, r.ctx0 + i);
            if (row_end <= start) continue;
            const float* q = r.q + i * r.q_stride + hg * hd;
            float* acc = r.acc + static_cast<int64_t>(row) * hd;
            float block_max = kNegInf;
            for (int64_t p = start; p < row_end; ++p) {
                load_k_head(kv, slot0 + p, kv_head, hd, row_buf);
                scores[p - start] = score(s, q, row_buf);
                block_max = std::max(block_max, scores[p - start]);
            }
            const float new_max = std::max(r.m[row], block_max);
            const float correction = std::exp(r.m[row] - new_max);
            r.l[row] *= correction;
            for (int d = 0; d < hd; ++d) acc[d] *= correction;
            for (int64_t p = start; p < row_end; ++p) {
                const float e = std::exp(scores[p - start] - new_max);
                r.l[row] += e;
                load_v_head(kv, slot0 + p, kv_head, hd, row_buf);
                for (int d = 0; d < hd; ++d) acc[d] += e * row_buf[d];
            }
            r.m[row] = new_max;
        }
        start = end;
    }
}

// out row = acc / l for a piece that covers its rows' whole context. A
// row's query head is r.kv_head * r.group + hg.
void finalize_piece(const AttentionShape& s, const AttnRange& r, float* out_base, int64_t out_stride) {
    const int head_dim = s.head_dim;
    const int per_tok = r.n_kv_heads * r.group;  // rows of a token: its q (and out) row in order
    for (int row = 0; row < r.n_tok * per_tok; ++row) {
        const int i = row / per_tok, hg = row % per_tok;
        float* out = out_base + i * out_stride + hg * head_dim;
        const float l = denominator(s, r.kv_head * r.group + hg, r.l[row], r.m[row]);
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        const float* acc = r.acc + static_cast<int64_t>(row) * head_dim;
        for (int d = 0; d < head_dim; ++d) out[d] = acc[d] * inv;
    }
}

// Combines the partial softmax sums of pieces [first, last) of one item.
void merge_pieces(const AttentionShape& s, const AttnRange* pieces, int n, float* out_base, int64_t out_stride) {
    const int head_dim = s.head_dim;
    const AttnRange& r0 = pieces[0];
    const int per_tok = r0.n_kv_heads * r0.group;
    for (int row = 0; row < r0.n_tok * per_tok; ++row) {
        const int i = row / per_tok, hg = row % per_tok;
        float* out = out_base + i * out_stride + hg * head_dim;
        float m = kNegInf;
        for (int p = 0; p < n; ++p) m = std::max(m, pieces[p].m[row]);
        float l = 0.0f;
        std::fill(out, out + head_dim, 0.0f);
        for (int p = 0; p < n; ++p) {
            if (pieces[p].m[row] == kNegInf) continue;  // no positions of this row in the piece
            const float w = std::exp(pieces[p].m[row] - m);
            l += w * pieces[p].l[row];
            const float* acc = pieces[p].acc + static_cast<int64_t>(row) * head_dim;
            for (int d = 0; d < head_dim; ++d) out[d] += w * acc[d];
        }
        l = denominator(s, r0.kv_head * r0.group + hg, l, m);
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        for (int d = 0; d < head_dim; ++d) out[d] *= inv;
    }
}

}  // namespace

void attend_head(const AttentionShape& s, const PagedKv& kv, const float* q, int head, int64_t n_ctx, float* out) {
    TS_CHECK(s.head_dim <= kMaxHeadDim && kv.block_size <= 256);
    attend_kv_head(s, kv, q, head, n_ctx, out);
}

AttendRangeFn find_attend_range(SimdLevel level, int head_dim, GgmlType k_type, GgmlType v_type) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    TS_CHECK(is_kv_type(k_type) && is_kv_type(v_type));
    AttendRangeFn fn = nullptr;
    if (level >= SimdLevel::Avx512Vnni) fn = x86::avx512_attend_range(head_dim, k_type, v_type);
    if (fn == nullptr && level != SimdLevel::Scalar) fn = x86::avx2_attend_range(head_dim, k_type, v_type);
    return fn != nullptr ? fn : attend_range_scalar;
}

void attention_batch(const AttentionShape& s, const PagedKv& kv_pools, const std::vector<AttnSeq>& seqs,
                     const float* q, float* out, ThreadPool& pool, AttentionScratch& scratch, SimdLevel level) {
    const int block_size = kv_pools.block_size;
    TS_CHECK(s.n_head % s.n_head_kv == 0 && block_size >= 1 && block_size <= 256 && s.head_dim <= kMaxHeadDim);
    TS_CHECK(kv_pools.kv_dim == s.n_head_kv * s.head_dim);
    const int group = s.n_head / s.n_head_kv, hd = s.head_dim;
    const int64_t q_dim = static_cast<int64_t>(s.n_head) * hd;
    // With a sliding window each piece holds one token and starts where its
    // window does, so every row of a piece sees all of the piece's positions
    // up to its own: the range kernels need no window mask (and the SIMD
    // ones run). Soft-capped scores are the scalar kernel's alone.
    const int tok_per_piece = s.window > 0 ? 1 : std::clamp(kMaxRowsPerPiece / group, 1, kMaxTokensPerPiece);
    const AttendRangeFn kernel = find_attend_range(s.softcap == 0.0f ? level : SimdLevel::Scalar, hd,
                                                   kv_pools.k_type, kv_pools.v_type);

    // Items: (token run of one sequence, KV heads), each cut into pieces.
    const int64_t step = (kSplitPositions + block_size - 1) / block_size * block_size;
    // A piece takes every KV head, so it reads whole K/V rows in order: one
    // head's slice of each row is a strided access that streamed ~4x slower
    // than contiguous rows once the KV is out of cache (whole rows won back
    // 9.3 -> 6.9 ms on 16 x 4k contexts; the rest is still open). Not when
    // that leaves too few pieces to keep the threads busy. Each row is
    // computed the same way in either case.
    int64_t whole_row_pieces = 0;
    for (const AttnSeq& sq : seqs) {
        const int64_t ctx_max = sq.pos0 + sq.n_tokens;
        whole_row_pieces += (sq.n_tokens + tok_per_piece - 1) / tok_per_piece * ((ctx_max + step - 1) / step);
    }
    const int heads_per_piece = whole_row_pieces >= kMinPiecesPerThread * pool.size() ? s.n_head_kv : 1;

    auto& pieces = scratch.pieces;
    auto& info = scratch.info;
    pieces.clear();
    info.clear();
    size_t partial_floats = 0;
    int32_t n_split_items = 0;
    for (size_t si = 0; si < seqs.size(); ++si) {
        const AttnSeq& sq = seqs[si];
        for (int t0 = 0; t0 < sq.n_tokens; t0 += tok_per_piece) {
            const int n_tok = std::min(tok_per_piece, sq.n_tokens - t0);
            const int64_t ctx0 = sq.pos0 + t0 + 1, ctx_max = ctx0 + n_tok - 1;
            for (int h = 0; h < s.n_head_kv; h += heads_per_piece) {
                const int64_t out_offset = (sq.first + t0) * q_dim + static_cast<int64_t>(h) * group * hd;
                // From the window's start (0 without one); later cuts at
                // the fixed multiples of step.
                const int64_t p_first = window_start(s, ctx0);
                const bool split = (p_first / step + 1) * step < ctx_max;
                for (int64_t p0 = p_first; p0 < ctx_max; p0 = (p0 / step + 1) * step) {
                    pieces.push_back(AttnRange{q + out_offset, q_dim, n_tok, group, h, heads_per_piece, ctx0, p0,
                                               std::min(ctx_max, (p0 / step + 1) * step), nullptr, nullptr, nullptr});
                    info.push_back(AttnPieceInfo{static_cast<int32_t>(si), split ? n_split_items : -1, out_offset});
                    partial_floats += static_cast<size_t>(n_tok) * group * heads_per_piece * (hd + 2);
                }
                n_split_items += split ? 1 : 0;
            }
        }
    }
    if (scratch.partial.size() < partial_floats) scratch.partial.resize(partial_floats);
    size_t off = 0;
    for (AttnRange& r : pieces) {
        const size_t rows = static_cast<size_t>(r.n_tok) * r.group * r.n_kv_heads;
        r.acc = scratch.partial.data() + off;
        r.m = r.acc + rows * hd;
        r.l = r.m + rows;
        off += rows * (hd + 2);
    }

    // Pieces go out through an atomic counter; a piece that covers its whole
    // item writes the output at once, split items are merged afterwards.
    std::atomic<size_t> next{0};
    auto run_pieces = [&](int, int) {
        for (;;) {
            const size_t p = next.fetch_add(1, std::memory_order_relaxed);
            if (p >= pieces.size()) return;
            PagedKv kv = kv_pools;
            kv.block_table = seqs[info[p].seq].block_table;
            kernel(s, kv, pieces[p]);
            if (info[p].split_item < 0) finalize_piece(s, pieces[p], out + info[p].out_offset, q_dim);
        }
    };
    if (pieces.size() == 1 || pool.size() == 1) {
        run_pieces(0, 1);
    } else {
        pool.run(run_pieces);
    }
    for (size_t p = 0; p < pieces.size();) {
        size_t e = p + 1;
        if (info[p].split_item >= 0) {
            while (e < pieces.size() && info[e].split_item == info[p].split_item) ++e;
            merge_pieces(s, &pieces[p], static_cast<int>(e - p), out + info[p].out_offset, q_dim);
        }
        p = e;
    }
}

}  // namespace tessera
