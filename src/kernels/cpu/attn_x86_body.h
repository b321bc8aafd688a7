// Body of the SIMD attention range kernel, written once over a vector-ops
// struct `Ops` (width W, load/store/fma/exp...; simd_ops_avx2_body.h,
// simd_ops_avx512_body.h) and loaders LoadF32, LoadF16, LoadBF16, LoadQ8_0
// (W elements from element c of a stored row, converted to floats in
// registers) and LoadI8 (W int8 as floats) that attn_avx2.cpp and
// attn_avx512.cpp define under their target pragmas before including it.
// Requires before inclusion: x86_body_context.h, then an Ops struct (checked below).

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "attn_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_SIMD_OPS)
#error "attn_x86_body.h: include kernels/cpu/simd_ops_avx2_body.h or simd_ops_avx512_body.h first (the Ops struct), same namespace"
#endif
#define TESSERA_BODY_ATTN_X86 1

// Query rows that see the same keys are processed R at a time so each K/V
// element is loaded and converted once per tile, not once per row:
// conversion and load ports, not FMAs, bound the one-row form. On a block
// every token of the range sees whole (left of the causal diagonal) a tile
// takes the query heads of one KV head across consecutive tokens; on the
// diagonal block, one token's. Every row's arithmetic (FMA order per key and
// element, softmax step) is the same as a tile of one, so results do not
// depend on the tile or on the tokens around a row.
constexpr int kRegs = Ops::W == 16 ? 32 : 16;  // vector registers of the ISA
// 4 score partial sums a row: 24 of 32 registers (AVX-512), 12 of 16 (AVX2;
// 3 rows measured 1.2x the speed of 2 with the V halves of accumulate_rows).
constexpr int kTileRows = Ops::W == 16 ? 6 : 3;
constexpr int kAccRegs = Ops::W == 16 ? 24 : kRegs / 2;  // accumulators of one V pass
// A tile takes the keys of several consecutive blocks per visit (up to
// kBlocksPerVisit, at most kScoreLanes scores a row): the tile setup and the
// V accumulators' loads and stores are paid once per visit. The online
// softmax still updates once per block, so the bits are those of a visit per
// block; it runs stage by stage over all blocks of the visit, so their
// latency chains overlap and their horizontal reductions share shuffle trees.
constexpr int kBlocksPerVisit = 8;
constexpr int kScoreLanes = 512;  // >= 256 + 16: a whole largest block

// K lane loaders: element d of the W keys from `key` of one head's slice
// of a keys-in-lanes block (tensor/kv_type.h), as floats. Each scales()
// call covers kDims dims (Q8_0: one block's fp16 scales of the W keys).
// F32/F16/BF16: element d of key j is element d * block_size + j of the
// slice, so the row loaders read W keys.
template <class L>
struct KeysOf {
    static constexpr int kDims = 4;
    static typename Ops::V scales(const uint8_t*, int64_t, int, int) { return Ops::zero(); }
    static typename Ops::V load(const uint8_t* head, int64_t bs, int d, int key, typename Ops::V) {
        return L::load(head, static_cast<int>(d * bs + key));
    }
};
using KeysF32 = KeysOf<LoadF32>;
using KeysF16 = KeysOf<LoadF16>;
using KeysBF16 = KeysOf<LoadBF16>;
// Q8_0: per block of 32 dims, block_size fp16 scales then 32 runs of
// block_size int8; value = q * d with one rounding, as the scalar dequantizer.
struct KeysQ8_0 {
    static constexpr int kDims = 32;
    static typename Ops::V scales(const uint8_t* head, int64_t bs, int d0, int key) {
        return LoadF16::load(head + d0 / 32 * 34 * bs, key);
    }
    static typename Ops::V load(const uint8_t* head, int64_t bs, int d, int key, typename Ops::V sc) {
        return Ops::mul(LoadI8::load(head + (d / 32 * 34 + 2 + d % 32) * bs, key), sc);
    }
};

// scores[r][j] = q[r] . k_j * scale for the R rows and the keys j in
// [key0, key0 + n) of one block whose K slice for this head starts at `head`
// (keys in lanes, kv_type.h), W keys at a time: per dim, q[r][d] broadcast
// times the W keys' element d, so the scores end up in lanes with no
// horizontal sum. Four partial sums per row and key (d mod 4, added
// pairwise at the end) hide the FMA latency; the order is per lane, so both
// widths and every tile give the same scores. scores[r][n, n rounded up to
// W) are set to -inf (the lanes past n may read other keys or padding).
// Out of line: inlined into the range loop its K loads waited longer on
// memory (decode at depth 4096 about 6% slower).
template <class KL, int R>
[[gnu::noinline]] void tile_scores(const float* const* q, const uint8_t* head, int64_t bs, int key0, int n, int hd,
                                   float scale, float* const* scores) {
    static_assert(KL::kDims % 4 == 0);
    for (int j = 0; j < n; j += Ops::W) {
        typename Ops::V a[R][4];
        for (int r = 0; r < R; ++r) a[r][0] = a[r][1] = a[r][2] = a[r][3] = Ops::zero();
        for (int d0 = 0; d0 < hd; d0 += KL::kDims) {
            const typename Ops::V sc = KL::scales(head, bs, d0, key0 + j);
            for (int dd = 0; dd < KL::kDims; ++dd) {
                const typename Ops::V kv = KL::load(head, bs, d0 + dd, key0 + j, sc);
                for (int r = 0; r < R; ++r) a[r][dd % 4] = Ops::fmadd(Ops::set1(q[r][d0 + dd]), kv, a[r][dd % 4]);
            }
        }
        const typename Ops::V sv = Ops::set1(scale);
        for (int r = 0; r < R; ++r) {
            Ops::store(scores[r] + j, Ops::mul(Ops::add(Ops::add(a[r][0], a[r][1]), Ops::add(a[r][2], a[r][3])), sv));
        }
    }
    for (int j = n; j % Ops::W != 0; ++j) {
        for (int r = 0; r < R; ++r) scores[r][j] = -std::numeric_limits<float>::infinity();
    }
}

// One block's part of the V accumulation of a tile: its V rows, the n
// weights p[r][0, n) of each row and the rescale corr[r] of what was summed
// before it.
struct AccBlock {
    const uint8_t* v;
    int64_t row_bytes;
    int n;
    const float* const* p;
    const float* corr;
};

// For each block in order, acc[r] = acc[r] * corr[r] + sum_j p[r][j] * v_j,
// over the vector chunks [c0, c0 + NC) of rows [r0, r0 + R): R x NC
// independent FMA chains, each V chunk loaded once for the R rows, the
// accumulators kept in registers from one block to the next (the same
// operations, so the same bits, as a pass per block). Always inlined: once
// the visits of several blocks grew the range kernel GCC stopped inlining
// it into decode's loop, and decode attention at depth 4096 took ~10% more
// CPU time.
template <class VL, int R, int NC>
[[gnu::always_inline]] inline void accumulate_part(float* const* acc, const AccBlock* blocks, int n_blocks, int r0, int c0) {
    typename Ops::V a[R][NC];
    for (int r = 0; r < R; ++r) {
        for (int c = 0; c < NC; ++c) a[r][c] = Ops::load(acc[r0 + r] + (c0 + c) * Ops::W);
    }
    for (int b = 0; b < n_blocks; ++b) {
        const AccBlock& blk = blocks[b];
        for (int r = 0; r < R; ++r) {
            const typename Ops::V cv = Ops::set1(blk.corr[r0 + r]);
            for (int c = 0; c < NC; ++c) a[r][c] = Ops::mul(a[r][c], cv);
        }
        for (int j = 0; j < blk.n; ++j) {
            typename Ops::V pj[R];
            for (int r = 0; r < R; ++r) pj[r] = Ops::set1(blk.p[r0 + r][j]);
            const uint8_t* vj = blk.v + j * blk.row_bytes;
            for (int c = 0; c < NC; ++c) {
                const typename Ops::V vc = VL::load(vj, (c0 + c) * Ops::W);
                for (int r = 0; r < R; ++r) a[r][c] = Ops::fmadd(pj[r], vc, a[r][c]);
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int c = 0; c < NC; ++c) Ops::store(acc[r0 + r] + (c0 + c) * Ops::W, a[r][c]);
    }
}

// Too many accumulators for the whole tile: passes of as many rows as fit,
// still each whole row in one pass (two half-row passes over the V rows
// stream them from memory twice as slowly at long contexts). Where not even
// two whole rows fit (AVX2 on 64-wide heads: a row is all 8 accumulator
// registers), several rows go through half rows at a time instead, so
// each V chunk is loaded and converted once for them, not once per row.
template <class VL, int R, int NC>
inline void accumulate_rows(float* const* acc, const AccBlock* blocks, int n_blocks) {
    constexpr bool kHalves = R >= 2 && kAccRegs / NC < 2 && NC % 2 == 0;
    constexpr int kCols = kHalves ? NC / 2 : NC;
    constexpr int kPass = std::max(1, std::min(R, kAccRegs / kCols));
    constexpr int kWhole = R / kPass * kPass;
    for (int c0 = 0; c0 < NC; c0 += kCols) {
        for (int r0 = 0; r0 < kWhole; r0 += kPass) accumulate_part<VL, kPass, kCols>(acc, blocks, n_blocks, r0, c0);
        if constexpr (kWhole < R) accumulate_part<VL, R - kWhole, kCols>(acc, blocks, n_blocks, kWhole, c0);
    }
}

// The row width in one pass: NC = hd / W chunks of accumulators per row.
template <class VL, int R>
inline void accumulate_tile(float* const* acc, const AccBlock* blocks, int n_blocks, int hd) {
    switch (hd / Ops::W) {
        case 1: accumulate_rows<VL, R, 1>(acc, blocks, n_blocks); return;
        case 2: accumulate_rows<VL, R, 2>(acc, blocks, n_blocks); return;
        case 4: accumulate_rows<VL, R, 4>(acc, blocks, n_blocks); return;
        case 8: accumulate_rows<VL, R, 8>(acc, blocks, n_blocks); return;
        default:  // other widths: one chunk at a time, row by row
            for (int r = 0; r < R; ++r) {
                for (int c0 = 0; c0 < hd / Ops::W; ++c0) accumulate_part<VL, 1, 1>(acc, blocks, n_blocks, r, c0);
            }
    }
}

// The keys [key0, key0 + n) of one block for one KV head: its K slice (keys
// in lanes) and the V row of key key0.
struct BlockKeys {
    const uint8_t* k_head;
    int64_t block_size;
    int key0;
    const uint8_t* v_rows;
    int64_t v_row_bytes;
    int n;
};

// The keys of one tile visit for one KV head: runs of keys of up to
// kBlocksPerVisit consecutive blocks, in order.
struct VisitKeys {
    BlockKeys part[kBlocksPerVisit];
    int n_parts;
};

// One block of keys for a tile of R rows that all see the same n keys:
// scores, the running max / sum update, then the V accumulation.
// The rows of one tile: query, accumulator, running max and sum of each.
struct TileRows {
    const float* q[kTileRows];
    float* acc[kTileRows];
    float* m[kTileRows];
    float* l[kTileRows];
};

// out[r] = hsum(v[r]) (or hmax) for the R rows, four at a time.
template <int R, bool kMax>
inline void reduce_rows(typename Ops::V* v, float* out) {
    for (int r0 = 0; r0 < R; r0 += 4) {
        typename Ops::V four[4];
        float res[4];
        for (int k = 0; k < 4; ++k) four[k] = r0 + k < R ? v[r0 + k] : Ops::zero();
        if constexpr (kMax) {
            Ops::hmax_each4(four, res);
        } else {
            Ops::hsum_each4(four, res);
        }
        for (int k = 0; k < 4 && r0 + k < R; ++k) out[r0 + k] = res[k];
    }
}

// The online-softmax step of R rows over the scores of one block (n_lanes
// a multiple of W, -inf past the keys): new running max m, the rescale
// corr = e^(m_old - m) of what was summed before, scores replaced by
// p = e^(score - m) and l = l * corr + sum p. The rows go through each stage
// together, so their (latency-bound) max and exp chains overlap. The same
// operations as softmax_visit on one block, so the same bits, for the
// one-block visits (decode's, the diagonal's) without its arrays over the
// blocks of a visit.
template <int R>
inline void softmax_step(const TileRows& t, float* const* scores, int n_lanes, float* corr) {
    using V = typename Ops::V;
    V mv[R], sum[R];
    for (int r = 0; r < R; ++r) mv[r] = Ops::set1(-std::numeric_limits<float>::infinity());
    for (int j = 0; j < n_lanes; j += Ops::W) {
        for (int r = 0; r < R; ++r) mv[r] = Ops::max(Ops::load(scores[r] + j), mv[r]);  // NaNs skipped, as std::max
    }
    float m[R], block_max[R], new_max[R];
    for (int r = 0; r < R; ++r) m[r] = *t.m[r];
    reduce_rows<R, true>(mv, block_max);
    // Once the running maxes settle (they mostly do early) every rescale is
    // e^0 = 1 exactly; skip the calls.
    bool settled = true;
    for (int r = 0; r < R; ++r) {
        new_max[r] = std::max(m[r], block_max[r]);
        settled &= (new_max[r] == m[r]) & std::isfinite(m[r]);
        corr[r] = 1.0f;
    }
    if (!settled) {
        for (int r = 0; r < R; ++r) {
            if (!(new_max[r] == m[r] && std::isfinite(m[r]))) corr[r] = std::exp(m[r] - new_max[r]);
        }
    }
    for (int r = 0; r < R; ++r) {
        mv[r] = Ops::set1(new_max[r]);
        sum[r] = Ops::zero();
    }
    for (int j = 0; j < n_lanes; j += Ops::W) {
        for (int r = 0; r < R; ++r) {
            const V e = Ops::exp(Ops::sub(Ops::load(scores[r] + j), mv[r]));
            Ops::store(scores[r] + j, e);
            sum[r] = Ops::add(sum[r], e);
        }
    }
    float block_sum[R];
    reduce_rows<R, false>(sum, block_sum);
    for (int r = 0; r < R; ++r) {
        // An explicit fma: left to -ffp-contract, GCC fused this in some
        // inlined copies and not others, so a row's sum depended on the path.
        *t.l[r] = std::fma(*t.l[r], corr[r], block_sum[r]);
        *t.m[r] = new_max[r];
    }
}

// The online-softmax steps of R rows over the blocks of one visit, whose
// scores (-inf past each block's keys) start at score_rows[p] (n_lanes[p] a
// multiple of W): per block in order, new running max m, the rescale
// corr = e^(m_old - m) of what was summed before, scores replaced by
// p = e^(score - m) and l = l * corr + sum p. Each stage runs over every
// (block, row) of the visit before the next, so the latency-bound max, exp
// and reduction chains of all of them overlap and their horizontal maxes and
// sums share transposing shuffle trees (Ops::hmax_many / hsum_many, with
// hsum's / hmax's bits). A row's operations are those of one block at a
// time (softmax_step's).
template <int R>
inline void softmax_visit(const TileRows& t, float* const (*score_rows)[R], const int* n_lanes, int n_parts,
                          float (*corr)[R]) {
    using V = typename Ops::V;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    constexpr int kVecs = kBlocksPerVisit * R;
    V v[kVecs];  // (block p, row r) at p * R + r
    // Padded by W: the shuffle trees store whole vectors.
    alignas(64) float block_max[kVecs + Ops::W], new_max[kVecs + Ops::W], block_sum[kVecs + Ops::W];
    for (int p = 0; p < n_parts; ++p) {
        for (int r = 0; r < R; ++r) v[p * R + r] = Ops::set1(kNegInf);
        for (int j = 0; j < n_lanes[p]; j += Ops::W) {
            for (int r = 0; r < R; ++r) {
                v[p * R + r] = Ops::max(Ops::load(score_rows[p][r] + j), v[p * R + r]);  // NaNs skipped, as std::max
            }
        }
    }
    Ops::hmax_many(v, n_parts * R, block_max);
    float m[R];
    for (int r = 0; r < R; ++r) m[r] = *t.m[r];
    for (int p = 0; p < n_parts; ++p) {
        // Once the running maxes settle (they mostly do early) every rescale
        // is e^0 = 1 exactly; skip the calls (one branch for the R rows).
        bool settled = true;
        for (int r = 0; r < R; ++r) {
            new_max[p * R + r] = std::max(m[r], block_max[p * R + r]);
            settled &= (new_max[p * R + r] == m[r]) & std::isfinite(m[r]);
            corr[p][r] = 1.0f;
        }
        if (!settled) {
            for (int r = 0; r < R; ++r) {
                if (!(new_max[p * R + r] == m[r] && std::isfinite(m[r]))) corr[p][r] = std::exp(m[r] - new_max[p * R + r]);
            }
        }
        for (int r = 0; r < R; ++r) m[r] = new_max[p * R + r];
    }
    for (int r = 0; r < R; ++r) *t.m[r] = m[r];
    for (int p = 0; p < n_parts; ++p) {
        V mv[R];
        for (int r = 0; r < R; ++r) {
            mv[r] = Ops::set1(new_max[p * R + r]);
            v[p * R + r] = Ops::zero();
        }
        for (int j = 0; j < n_lanes[p]; j += Ops::W) {
            for (int r = 0; r < R; ++r) {
                const V e = Ops::exp(Ops::sub(Ops::load(score_rows[p][r] + j), mv[r]));
                Ops::store(score_rows[p][r] + j, e);
                v[p * R + r] = Ops::add(v[p * R + r], e);
            }
        }
    }
    Ops::hsum_many(v, n_parts * R, block_sum);
    for (int r = 0; r < R; ++r) {
        float l = *t.l[r];
        // An explicit fma: left to -ffp-contract, GCC fused this in some
        // inlined copies and not others, so a row's sum depended on the path.
        for (int p = 0; p < n_parts; ++p) l = std::fma(l, corr[p][r], block_sum[p * R + r]);
        *t.l[r] = l;
    }
}

// A visit of several blocks by a tile of R rows that all see the same keys:
// the scores of every block, the softmax steps, then the V accumulation of
// all blocks in one pass. Out of line: inlined, decode attention at depth
// 4096 took ~12% more CPU time, though decode never comes here.
template <class KL, class VL, int R>
[[gnu::noinline]] void attend_blocks(const AttentionShape& s, const TileRows& t, const VisitKeys& u,
                                     float (*scores)[kScoreLanes]) {
    float* score_rows[kBlocksPerVisit][R];
    int n_lanes[kBlocksPerVisit];
    float corr[kBlocksPerVisit][R];
    AccBlock blocks[kBlocksPerVisit];
    int lane0 = 0;
    for (int p = 0; p < u.n_parts; ++p) {
        const BlockKeys& b = u.part[p];
        for (int r = 0; r < R; ++r) score_rows[p][r] = scores[r] + lane0;
        tile_scores<KL, R>(t.q, b.k_head, b.block_size, b.key0, b.n, s.head_dim, s.scale, score_rows[p]);
        n_lanes[p] = (b.n + Ops::W - 1) / Ops::W * Ops::W;  // -inf past n
        lane0 += n_lanes[p];
    }
    softmax_visit<R>(t, score_rows, n_lanes, u.n_parts, corr);
    for (int p = 0; p < u.n_parts; ++p) {
        const BlockKeys& b = u.part[p];
        blocks[p] = AccBlock{b.v_rows, b.v_row_bytes, b.n, score_rows[p], corr[p]};
    }
    accumulate_tile<VL, R>(t.acc, blocks, u.n_parts, s.head_dim);
}

// One visit of a tile of R rows that all see the same keys: one block's
// scores, the running max / sum update, then the V accumulation; visits of
// several blocks through attend_blocks.
template <class KL, class VL, int R>
inline void attend_tile(const AttentionShape& s, const TileRows& t, const VisitKeys& u,
                        float (*scores)[kScoreLanes]) {
    if (u.n_parts > 1) {
        attend_blocks<KL, VL, R>(s, t, u, scores);
        return;
    }
    const BlockKeys& b = u.part[0];
    float* score_rows[R];
    for (int r = 0; r < R; ++r) score_rows[r] = scores[r];
    tile_scores<KL, R>(t.q, b.k_head, b.block_size, b.key0, b.n, s.head_dim, s.scale, score_rows);
    float corr[R];
    softmax_step<R>(t, score_rows, (b.n + Ops::W - 1) / Ops::W * Ops::W, corr);
    const AccBlock block{b.v_rows, b.v_row_bytes, b.n, score_rows, corr};
    accumulate_tile<VL, R>(t.acc, &block, 1, s.head_dim);
}

// attend_tile for nr <= kTileRows rows.
template <class KL, class VL, int R = 1>
inline void attend_rows(const AttentionShape& s, int nr, const TileRows& t, const VisitKeys& b,
                        float (*scores)[kScoreLanes]) {
    if (nr == R) {
        attend_tile<KL, VL, R>(s, t, b, scores);
    } else if constexpr (R < kTileRows) {
        attend_rows<KL, VL, R + 1>(s, nr, t, b, scores);
    }
}

template <class KL, class VL>
void attend_range_simd(const AttentionShape& s, const PagedKv& kv, const AttnRange& r) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int hd = s.head_dim, per_tok = r.n_kv_heads * r.group, rows = r.n_tok * per_tok;
    std::fill(r.acc, r.acc + static_cast<int64_t>(rows) * hd, 0.0f);
    std::fill(r.m, r.m + rows, kNegInf);
    std::fill(r.l, r.l + rows, 0.0f);
    alignas(64) float scores[kTileRows][kScoreLanes];
    // Byte offset of a KV head's slice in a row (Q8_0 heads are whole blocks);
    // in a K block the slice starts block_size times further.
    const int64_t bs = kv.block_size;
    const int64_t k_head_bytes = kv_row_bytes(kv.k_type, hd) * bs, v_head_bytes = kv_row_bytes(kv.v_type, hd);
    const uint8_t* k_pool = kv.k_pool + r.kv_head * k_head_bytes;
    const uint8_t* v_pool = kv.v_pool + r.kv_head * v_head_bytes;
    // The first n_rows rows of KV head hh counted token-major from token
    // `tok0` (row k: token tok0 + k / group, query head k % group), all
    // against the same keys, in as few tiles as kTileRows allows, of
    // near-equal size (8 rows: 4 + 4, not 6 + 2 with a third of the loads
    // paying for two rows).
    auto attend_run = [&](int hh, int tok0, int n_rows, const VisitKeys& keys) {
        int i = tok0, g = 0;  // token and query head of the tile's next row
        for (int k = 0, tiles = (n_rows + kTileRows - 1) / kTileRows; k < n_rows; --tiles) {
            const int nr = (n_rows - k + tiles - 1) / tiles;
            k += nr;
            TileRows t;
            for (int x = 0; x < nr; ++x, ++g) {
                if (g == r.group) g = 0, ++i;
                const int hg = hh * r.group + g;
                const int64_t row = static_cast<int64_t>(i) * per_tok + hg;
                t.q[x] = r.q + i * r.q_stride + hg * hd;
                t.acc[x] = r.acc + row * hd;
                t.m[x] = r.m + row;
                t.l[x] = r.l + row;
            }
            attend_rows<KL, VL>(s, nr, t, keys, scores);
        }
    };
    const int64_t block_lanes = (bs + Ops::W - 1) / Ops::W * Ops::W;
    // One token (decode) reads each K/V element once, from memory at long
    // contexts: block by block, all heads of a block together, is the order
    // the prefetchers follow (visits of several blocks, head by head, ran
    // 1.65x slower at a 64k context). Several tokens reuse them from cache.
    const int visit_blocks =
        r.n_tok == 1 ? 1 : static_cast<int>(std::clamp<int64_t>(kScoreLanes / block_lanes, 1, kBlocksPerVisit));
    // The keys [a, e) of KV head hh (within one visit), block by block.
    auto update_keys = [&](int hh, int64_t a, int64_t e) {
        VisitKeys u;
        u.n_parts = 0;
        while (a < e) {
            const int64_t block = a / bs, block_end = std::min(e, (block + 1) * bs);
            const int64_t slot = kv.block_table[block] + (a - block * bs);  // of position a
            const int64_t block_slot = slot / bs * bs;
            u.part[u.n_parts++] = BlockKeys{k_pool + block_slot * kv.k_row_bytes + hh * k_head_bytes, bs,
                                            static_cast<int>(slot - block_slot),
                                            v_pool + slot * kv.v_row_bytes + hh * v_head_bytes, kv.v_row_bytes,
                                            static_cast<int>(block_end - a)};
            a = block_end;
        }
        return u;
    };
    for (int64_t start = r.p0; start < r.p1;) {
        // One visit: the rest of start's group of visit_blocks blocks, within
        // the range, and ending where the blocks every token sees whole end
        // (so those never go token by token with the diagonal).
        const int64_t visit = start / bs / visit_blocks, all_whole = r.ctx0 / bs * bs;
        int64_t end = std::min(r.p1, (visit + 1) * visit_blocks * bs);
        if (start < all_whole) end = std::min(end, all_whole);
        // Tokens from `whole` on see all of [start, end) and share tiles;
        // those before it (on the diagonal) see fewer keys each.
        const int whole = static_cast<int>(std::clamp<int64_t>(end - r.ctx0, 0, r.n_tok));
        for (int hh = 0; hh < r.n_kv_heads; ++hh) {
            attend_run(hh, whole, (r.n_tok - whole) * r.group, update_keys(hh, start, end));
            for (int i = 0; i < whole; ++i) {
                const int64_t row_end = r.ctx0 + i;
                if (row_end > start) attend_run(hh, i, r.group, update_keys(hh, start, row_end));
            }
        }
        start = end;
    }
}

// The instantiation for a (K type, V type) pair; nullptr for other types.
template <class KL>
AttendRangeFn kernel_with_v(GgmlType v) {
    switch (v) {
        case GgmlType::F32: return attend_range_simd<KL, LoadF32>;
        case GgmlType::F16: return attend_range_simd<KL, LoadF16>;
        case GgmlType::BF16: return attend_range_simd<KL, LoadBF16>;
        case GgmlType::Q8_0: return attend_range_simd<KL, LoadQ8_0>;
        default: return nullptr;
    }
}

inline AttendRangeFn kernel_for(GgmlType k, GgmlType v) {
    switch (k) {
        case GgmlType::F32: return kernel_with_v<KeysF32>(v);
        case GgmlType::F16: return kernel_with_v<KeysF16>(v);
        case GgmlType::BF16: return kernel_with_v<KeysBF16>(v);
        case GgmlType::Q8_0: return kernel_with_v<KeysQ8_0>(v);
        default: return nullptr;
    }
}
