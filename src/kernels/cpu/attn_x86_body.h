// Body of the SIMD attention range kernel, written once over a vector-ops
// struct `Ops` (width W, load/store/fma/exp...) that attn_avx2.cpp and
// attn_avx512.cpp define under their target pragmas before including it.
// Requires before inclusion: <algorithm>, <cmath>, <limits>, kernels/attention.h.

// Scores of one query row against keys [start, end) of one block; keys go
// four at a time so four dot products are in flight.
inline void block_scores(const float* q, const float* k_base, int64_t kv_dim, int64_t start, int64_t end,
                         int hd, float scale, float* scores) {
    int64_t p = start;
    for (; p + 4 <= end; p += 4) {
        const float* k0 = k_base + p * kv_dim;
        typename Ops::V a0 = Ops::zero(), a1 = Ops::zero(), a2 = Ops::zero(), a3 = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) {
            const typename Ops::V qv = Ops::load(q + c);
            a0 = Ops::fmadd(qv, Ops::load(k0 + c), a0);
            a1 = Ops::fmadd(qv, Ops::load(k0 + kv_dim + c), a1);
            a2 = Ops::fmadd(qv, Ops::load(k0 + 2 * kv_dim + c), a2);
            a3 = Ops::fmadd(qv, Ops::load(k0 + 3 * kv_dim + c), a3);
        }
        _mm_storeu_ps(scores + (p - start), _mm_mul_ps(Ops::hsum4(a0, a1, a2, a3), _mm_set1_ps(scale)));
    }
    for (; p < end; ++p) {
        const float* k = k_base + p * kv_dim;
        typename Ops::V a = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) a = Ops::fmadd(Ops::load(q + c), Ops::load(k + c), a);
        scores[p - start] = Ops::hsum(a) * scale;
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

// acc[0, NC*W) = acc * corr + sum_j p[j] * v_j with the NC vector chunks of
// the row in registers at once: NC independent FMA chains instead of one
// chain per chunk (the latency-bound form that dominated long contexts).
template <int NC>
inline void accumulate_v(float* acc, const float* v, int64_t kv_dim, const float* p, int n, float corr) {
    typename Ops::V a[NC];
    const typename Ops::V cv = Ops::set1(corr);
    for (int c = 0; c < NC; ++c) a[c] = Ops::mul(Ops::load(acc + c * Ops::W), cv);
    for (int j = 0; j < n; ++j) {
        const typename Ops::V pj = Ops::set1(p[j]);
        const float* vj = v + j * kv_dim;
        for (int c = 0; c < NC; ++c) a[c] = Ops::fmadd(pj, Ops::load(vj + c * Ops::W), a[c]);
    }
    for (int c = 0; c < NC; ++c) Ops::store(acc + c * Ops::W, a[c]);
}

// Any width: chunk by chunk (same arithmetic per element as above).
inline void accumulate_v_any(float* acc, const float* v, int64_t kv_dim, const float* p, int n, float corr, int hd) {
    const typename Ops::V cv = Ops::set1(corr);
    for (int c = 0; c < hd; c += Ops::W) {
        typename Ops::V a = Ops::mul(Ops::load(acc + c), cv);
        for (int j = 0; j < n; ++j) a = Ops::fmadd(Ops::set1(p[j]), Ops::load(v + j * kv_dim + c), a);
        Ops::store(acc + c, a);
    }
}

inline void accumulate(float* acc, const float* v, int64_t kv_dim, const float* p, int n, float corr, int hd) {
    switch (hd / Ops::W) {
        case 1: accumulate_v<1>(acc, v, kv_dim, p, n, corr); return;
        case 2: accumulate_v<2>(acc, v, kv_dim, p, n, corr); return;
        case 4: accumulate_v<4>(acc, v, kv_dim, p, n, corr); return;
        case 8: accumulate_v<8>(acc, v, kv_dim, p, n, corr); return;
        default: accumulate_v_any(acc, v, kv_dim, p, n, corr, hd); return;
    }
}

void attend_range_simd(const AttentionShape& s, const PagedKv& kv, const AttnRange& r) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int hd = s.head_dim, rows = r.n_tok * r.group;
    std::fill(r.acc, r.acc + static_cast<int64_t>(rows) * hd, 0.0f);
    std::fill(r.m, r.m + rows, kNegInf);
    std::fill(r.l, r.l + rows, 0.0f);
    alignas(64) float scores[256 + 16];
    const int64_t head_off = static_cast<int64_t>(r.kv_head) * hd;
    for (int64_t start = r.p0; start < r.p1;) {
        const int64_t block = start / kv.block_size;
        const int64_t end = std::min(r.p1, (block + 1) * kv.block_size);
        // Slot of position p is slot_shift + p within this block.
        const int64_t slot_shift = static_cast<int64_t>(kv.block_table[block]) * kv.block_size - block * kv.block_size;
        const float* k_base = kv.k_pool + slot_shift * kv.kv_dim + head_off;
        const float* v_base = kv.v_pool + slot_shift * kv.kv_dim + head_off;
        for (int row = 0; row < rows; ++row) {
            const int i = row / r.group, g = row % r.group;
            const int64_t row_end = std::min(end, r.ctx0 + i);
            if (row_end <= start) continue;
            const int n = static_cast<int>(row_end - start);
            block_scores(r.q + i * r.q_stride + g * hd, k_base, kv.kv_dim, start, row_end, hd, s.scale, scores);
            float block_max = kNegInf;
            for (int j = 0; j < n; ++j) block_max = std::max(block_max, scores[j]);
            const float new_max = std::max(r.m[row], block_max);
            const float correction = std::exp(r.m[row] - new_max);
            r.l[row] = r.l[row] * correction + exp_and_sum(scores, n, new_max);
            r.m[row] = new_max;
            accumulate(r.acc + static_cast<int64_t>(row) * hd, v_base + start * kv.kv_dim, kv.kv_dim, scores, n,
                       correction, hd);
        }
        start = end;
    }
}
