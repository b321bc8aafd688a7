// Body of the SIMD attention range kernel, written once over a vector-ops
// struct `Ops` (width W, load/store/fma/exp...; simd_ops_avx2_body.h,
// simd_ops_avx512_body.h) and row loaders LoadF32, LoadF16, LoadBF16,
// LoadQ8_0 (W elements of a stored K/V row, converted to floats in registers)
// that attn_avx2.cpp and attn_avx512.cpp define under their target pragmas
// before including it.
// Requires before inclusion: <algorithm>, <cmath>, <limits>, kernels/attention.h,
// tensor/kv_type.h.

// Query rows (heads of one GQA group at one token) are processed R at a time
// so each K/V element is loaded and converted once per tile, not once per
// row: conversion and load ports, not FMAs, bound the one-row form. Every
// row's arithmetic (FMA order per key, reduction tree) is the same as a tile
// of one, so results do not depend on the tile.
constexpr int kRegs = Ops::W == 16 ? 32 : 16;  // vector registers of the ISA
constexpr int kTileRows = Ops::W == 16 ? 4 : 2;
constexpr int kAccRegs = kRegs / 2;  // accumulators of the V pass

// scores[r][j] = q[r] . k_j * scale for the R rows and n key rows (row j at
// k + j * row_bytes); keys go four at a time so 4R dot products are in flight.
template <class KL, int R>
inline void tile_scores(const float* const* q, const uint8_t* k, int64_t row_bytes, int n, int hd, float scale,
                        float* const* scores) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const uint8_t* k0 = k + j * row_bytes;
        typename Ops::V a[R][4];
        for (int r = 0; r < R; ++r) a[r][0] = a[r][1] = a[r][2] = a[r][3] = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) {
            const typename Ops::V kv0 = KL::load(k0, c), kv1 = KL::load(k0 + row_bytes, c),
                                  kv2 = KL::load(k0 + 2 * row_bytes, c), kv3 = KL::load(k0 + 3 * row_bytes, c);
            for (int r = 0; r < R; ++r) {
                const typename Ops::V qv = Ops::load(q[r] + c);
                a[r][0] = Ops::fmadd(qv, kv0, a[r][0]);
                a[r][1] = Ops::fmadd(qv, kv1, a[r][1]);
                a[r][2] = Ops::fmadd(qv, kv2, a[r][2]);
                a[r][3] = Ops::fmadd(qv, kv3, a[r][3]);
            }
        }
        for (int r = 0; r < R; ++r) {
            _mm_storeu_ps(scores[r] + j, _mm_mul_ps(Ops::hsum4(a[r][0], a[r][1], a[r][2], a[r][3]), _mm_set1_ps(scale)));
        }
    }
    for (; j < n; ++j) {
        const uint8_t* kj = k + j * row_bytes;
        typename Ops::V a[R];
        for (int r = 0; r < R; ++r) a[r] = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) {
            const typename Ops::V kv = KL::load(kj, c);
            for (int r = 0; r < R; ++r) a[r] = Ops::fmadd(Ops::load(q[r] + c), kv, a[r]);
        }
        for (int r = 0; r < R; ++r) scores[r][j] = Ops::hsum(a[r]) * scale;
    }
}

// Replaces scores[0, n) by exp(scores - max) and returns their sum; entries
// up to the next multiple of W are scratch (the buffer is padded).
inline float exp_and_sum(float* scores, int n, float max) {
    const typename Ops::V mv = Ops::set1(max);
    typename Ops::V sum = Ops::zero();
    int j = 0;
    for (; j + Ops::W <= n; j += Ops::W) {
        const typename Ops::V e = Ops::exp(Ops::sub(Ops::load(scores + j), mv));
        Ops::store(scores + j, e);
        sum = Ops::add(sum, e);
    }
    float total = Ops::hsum(sum);
    for (; j < n; ++j) {
        scores[j] = std::exp(scores[j] - max);
        total += scores[j];
    }
    return total;
}

// acc[r] = acc[r] * corr[r] + sum_j p[r][j] * v_j over the vector chunks
// [c0, c0 + NC) of the rows: R x NC independent FMA chains, each V chunk
// loaded once for the R rows.
template <class VL, int R, int NC>
inline void accumulate_part(float* const* acc, const uint8_t* v, int64_t row_bytes, const float* const* p, int n,
                            const float* corr, int c0) {
    typename Ops::V a[R][NC];
    for (int r = 0; r < R; ++r) {
        const typename Ops::V cv = Ops::set1(corr[r]);
        for (int c = 0; c < NC; ++c) a[r][c] = Ops::mul(Ops::load(acc[r] + (c0 + c) * Ops::W), cv);
    }
    for (int j = 0; j < n; ++j) {
        typename Ops::V pj[R];
        for (int r = 0; r < R; ++r) pj[r] = Ops::set1(p[r][j]);
        const uint8_t* vj = v + j * row_bytes;
        for (int c = 0; c < NC; ++c) {
            const typename Ops::V vc = VL::load(vj, (c0 + c) * Ops::W);
            for (int r = 0; r < R; ++r) a[r][c] = Ops::fmadd(pj[r], vc, a[r][c]);
        }
    }
    for (int r = 0; r < R; ++r) {
        for (int c = 0; c < NC; ++c) Ops::store(acc[r] + (c0 + c) * Ops::W, a[r][c]);
    }
}

template <class VL, int R, int NC>
inline void accumulate_rows(float* const* acc, const uint8_t* v, int64_t row_bytes, const float* const* p, int n,
                            const float* corr) {
    if constexpr (R * NC <= kAccRegs) {
        accumulate_part<VL, R, NC>(acc, v, row_bytes, p, n, corr, 0);
    } else {
        // Too many accumulators for the tile: row by row, still each whole
        // row in one pass (two half-row passes over the V rows stream them
        // from memory twice as slowly at long contexts).
        for (int r = 0; r < R; ++r) accumulate_part<VL, 1, NC>(acc + r, v, row_bytes, p + r, n, corr + r, 0);
    }
}

// The row width in one pass: NC = hd / W chunks of accumulators per row.
template <class VL, int R>
inline void accumulate_tile(float* const* acc, const uint8_t* v, int64_t row_bytes, const float* const* p, int n,
                            const float* corr, int hd) {
    switch (hd / Ops::W) {
        case 1: accumulate_rows<VL, R, 1>(acc, v, row_bytes, p, n, corr); return;
        case 2: accumulate_rows<VL, R, 2>(acc, v, row_bytes, p, n, corr); return;
        case 4: accumulate_rows<VL, R, 4>(acc, v, row_bytes, p, n, corr); return;
        case 8: accumulate_rows<VL, R, 8>(acc, v, row_bytes, p, n, corr); return;
        default:  // other widths: one chunk at a time, row by row
            for (int r = 0; r < R; ++r) {
                for (int c0 = 0; c0 < hd / Ops::W; ++c0) {
                    accumulate_part<VL, 1, 1>(acc + r, v, row_bytes, p + r, n, corr + r, c0);
                }
            }
    }
}

// max of scores[0, n), NaNs skipped as by std::max(running, score).
inline float row_max(const float* scores, int n) {
    float best = -std::numeric_limits<float>::infinity();
    int j = 0;
    if (n >= Ops::W) {
        typename Ops::V v = Ops::set1(best);
        for (; j + Ops::W <= n; j += Ops::W) v = Ops::max(Ops::load(scores + j), v);
        best = Ops::hmax(v);
    }
    for (; j < n; ++j) best = std::max(best, scores[j]);
    return best;
}

// One block of keys for a tile of R rows that all see the same n keys:
// scores, the running max / sum update, then the V accumulation.
template <class KL, class VL, int R>
inline void attend_tile(const AttentionShape& s, const float* const* q, float* const* acc, float* m, float* l,
                        const uint8_t* k_rows, int64_t k_row_bytes, const uint8_t* v_rows, int64_t v_row_bytes,
                        int n, float (*scores)[256 + 16]) {
    float* score_rows[R];
    for (int r = 0; r < R; ++r) score_rows[r] = scores[r];
    tile_scores<KL, R>(q, k_rows, k_row_bytes, n, s.head_dim, s.scale, score_rows);
    float corr[R];
    for (int r = 0; r < R; ++r) {
        const float new_max = std::max(m[r], row_max(scores[r], n));
        // Once the running max settles (it mostly does early) the rescale is
        // e^0 = 1 exactly; skip the call.
        corr[r] = new_max == m[r] && std::isfinite(new_max) ? 1.0f : std::exp(m[r] - new_max);
        l[r] = l[r] * corr[r] + exp_and_sum(scores[r], n, new_max);
        m[r] = new_max;
    }
    accumulate_tile<VL, R>(acc, v_rows, v_row_bytes, score_rows, n, corr, s.head_dim);
}

// attend_tile for nr <= kTileRows rows.
template <class KL, class VL>
inline void attend_rows(const AttentionShape& s, int nr, const float* const* q, float* const* acc, float* m, float* l,
                        const uint8_t* k, int64_t kb, const uint8_t* v, int64_t vb, int n,
                        float (*scores)[256 + 16]) {
    switch (nr) {
        case 1: attend_tile<KL, VL, 1>(s, q, acc, m, l, k, kb, v, vb, n, scores); return;
        case 2: attend_tile<KL, VL, 2>(s, q, acc, m, l, k, kb, v, vb, n, scores); return;
        case 3:
            if constexpr (kTileRows >= 3) attend_tile<KL, VL, 3>(s, q, acc, m, l, k, kb, v, vb, n, scores);
            return;
        default:
            if constexpr (kTileRows >= 4) attend_tile<KL, VL, 4>(s, q, acc, m, l, k, kb, v, vb, n, scores);
            return;
    }
}

template <class KL, class VL>
void attend_range_simd(const AttentionShape& s, const PagedKv& kv, const AttnRange& r) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int hd = s.head_dim, per_tok = r.n_kv_heads * r.group, rows = r.n_tok * per_tok;
    std::fill(r.acc, r.acc + static_cast<int64_t>(rows) * hd, 0.0f);
    std::fill(r.m, r.m + rows, kNegInf);
    std::fill(r.l, r.l + rows, 0.0f);
    alignas(64) float scores[kTileRows][256 + 16];
    // Byte offset of a KV head's slice in a row (Q8_0 heads are whole blocks).
    const int64_t k_head_bytes = kv_row_bytes(kv.k_type, hd), v_head_bytes = kv_row_bytes(kv.v_type, hd);
    const uint8_t* k_pool = kv.k_pool + r.kv_head * k_head_bytes;
    const uint8_t* v_pool = kv.v_pool + r.kv_head * v_head_bytes;
    for (int64_t start = r.p0; start < r.p1;) {
        const int64_t block = start / kv.block_size;
        const int64_t end = std::min(r.p1, (block + 1) * kv.block_size);
        // Slot of position `start`; the block's later positions follow it.
        const int64_t slot = static_cast<int64_t>(kv.block_table[block]) * kv.block_size + (start - block * kv.block_size);
        const uint8_t* k_rows = k_pool + slot * kv.k_row_bytes;
        const uint8_t* v_rows = v_pool + slot * kv.v_row_bytes;
        for (int i = 0; i < r.n_tok; ++i) {
            const int64_t row_end = std::min(end, r.ctx0 + i);
            if (row_end <= start) continue;
            const int n = static_cast<int>(row_end - start);
            for (int hh = 0; hh < r.n_kv_heads; ++hh) {
                const uint8_t* k_head = k_rows + hh * k_head_bytes;
                const uint8_t* v_head = v_rows + hh * v_head_bytes;
                for (int g0 = 0; g0 < r.group; g0 += kTileRows) {
                    const int nr = std::min(kTileRows, r.group - g0);
                    const int hg = hh * r.group + g0;  // the tile's first row within the token
                    const int64_t row0 = static_cast<int64_t>(i) * per_tok + hg;
                    const float* q[kTileRows];
                    float* acc[kTileRows];
                    for (int t = 0; t < nr; ++t) {
                        q[t] = r.q + i * r.q_stride + (hg + t) * hd;
                        acc[t] = r.acc + (row0 + t) * hd;
                    }
                    attend_rows<KL, VL>(s, nr, q, acc, r.m + row0, r.l + row0, k_head, kv.k_row_bytes, v_head,
                                        kv.v_row_bytes, n, scores);
                }
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
        case GgmlType::F32: return kernel_with_v<LoadF32>(v);
        case GgmlType::F16: return kernel_with_v<LoadF16>(v);
        case GgmlType::BF16: return kernel_with_v<LoadBF16>(v);
        case GgmlType::Q8_0: return kernel_with_v<LoadQ8_0>(v);
        default: return nullptr;
    }
}
