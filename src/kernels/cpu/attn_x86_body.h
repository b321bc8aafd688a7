// Body of the SIMD attention range kernel, written once over a vector-ops
// struct `Ops` (width W, load/store/fma/exp...; simd_ops_avx2_body.h,
// simd_ops_avx512_body.h) and row loaders LoadF32, LoadF16, LoadBF16,
// LoadQ8_0 (W elements of a stored K/V row, converted to floats in registers)
// that attn_avx2.cpp and attn_avx512.cpp define under their target pragmas
// before including it.
// Requires before inclusion: <algorithm>, <cmath>, <limits>, kernels/attention.h,
// tensor/kv_type.h.

// Scores of one query row against n key rows (row j at k + j * row_bytes);
// keys go four at a time so four dot products are in flight.
template <class KL>
inline void block_scores(const float* q, const uint8_t* k, int64_t row_bytes, int n, int hd, float scale,
                         float* scores) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const uint8_t* k0 = k + j * row_bytes;
        typename Ops::V a0 = Ops::zero(), a1 = Ops::zero(), a2 = Ops::zero(), a3 = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) {
            const typename Ops::V qv = Ops::load(q + c);
            a0 = Ops::fmadd(qv, KL::load(k0, c), a0);
            a1 = Ops::fmadd(qv, KL::load(k0 + row_bytes, c), a1);
            a2 = Ops::fmadd(qv, KL::load(k0 + 2 * row_bytes, c), a2);
            a3 = Ops::fmadd(qv, KL::load(k0 + 3 * row_bytes, c), a3);
        }
        _mm_storeu_ps(scores + j, _mm_mul_ps(Ops::hsum4(a0, a1, a2, a3), _mm_set1_ps(scale)));
    }
    for (; j < n; ++j) {
        const uint8_t* kj = k + j * row_bytes;
        typename Ops::V a = Ops::zero();
        for (int c = 0; c < hd; c += Ops::W) a = Ops::fmadd(Ops::load(q + c), KL::load(kj, c), a);
        scores[j] = Ops::hsum(a) * scale;
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
template <class VL, int NC>
inline void accumulate_v(float* acc, const uint8_t* v, int64_t row_bytes, const float* p, int n, float corr) {
    typename Ops::V a[NC];
    const typename Ops::V cv = Ops::set1(corr);
    for (int c = 0; c < NC; ++c) a[c] = Ops::mul(Ops::load(acc + c * Ops::W), cv);
    for (int j = 0; j < n; ++j) {
        const typename Ops::V pj = Ops::set1(p[j]);
        const uint8_t* vj = v + j * row_bytes;
        for (int c = 0; c < NC; ++c) a[c] = Ops::fmadd(pj, VL::load(vj, c * Ops::W), a[c]);
    }
    for (int c = 0; c < NC; ++c) Ops::store(acc + c * Ops::W, a[c]);
}

// Any width: chunk by chunk (same arithmetic per element as above).
template <class VL>
inline void accumulate_v_any(float* acc, const uint8_t* v, int64_t row_bytes, const float* p, int n, float corr,
                             int hd) {
    const typename Ops::V cv = Ops::set1(corr);
    for (int c = 0; c < hd; c += Ops::W) {
        typename Ops::V a = Ops::mul(Ops::load(acc + c), cv);
        for (int j = 0; j < n; ++j) a = Ops::fmadd(Ops::set1(p[j]), VL::load(v + j * row_bytes, c), a);
        Ops::store(acc + c, a);
    }
}

template <class VL>
inline void accumulate(float* acc, const uint8_t* v, int64_t row_bytes, const float* p, int n, float corr, int hd) {
    switch (hd / Ops::W) {
        case 1: accumulate_v<VL, 1>(acc, v, row_bytes, p, n, corr); return;
        case 2: accumulate_v<VL, 2>(acc, v, row_bytes, p, n, corr); return;
        case 4: accumulate_v<VL, 4>(acc, v, row_bytes, p, n, corr); return;
        case 8: accumulate_v<VL, 8>(acc, v, row_bytes, p, n, corr); return;
        default: accumulate_v_any<VL>(acc, v, row_bytes, p, n, corr, hd); return;
    }
}

template <class KL, class VL>
void attend_range_simd(const AttentionShape& s, const PagedKv& kv, const AttnRange& r) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int hd = s.head_dim, rows = r.n_tok * r.group;
    std::fill(r.acc, r.acc + static_cast<int64_t>(rows) * hd, 0.0f);
    std::fill(r.m, r.m + rows, kNegInf);
    std::fill(r.l, r.l + rows, 0.0f);
    alignas(64) float scores[256 + 16];
    const int64_t head_elems = static_cast<int64_t>(r.kv_head) * hd;
    const uint8_t* k_pool = kv.k_pool + kv_row_bytes(kv.k_type, head_elems);
    const uint8_t* v_pool = kv.v_pool + kv_row_bytes(kv.v_type, head_elems);
    for (int64_t start = r.p0; start < r.p1;) {
        const int64_t block = start / kv.block_size;
        const int64_t end = std::min(r.p1, (block + 1) * kv.block_size);
        // Slot of position `start`; the block's later positions follow it.
        const int64_t slot = static_cast<int64_t>(kv.block_table[block]) * kv.block_size + (start - block * kv.block_size);
        const uint8_t* k_rows = k_pool + slot * kv.k_row_bytes;
        const uint8_t* v_rows = v_pool + slot * kv.v_row_bytes;
        for (int row = 0; row < rows; ++row) {
            const int i = row / r.group, g = row % r.group;
            const int64_t row_end = std::min(end, r.ctx0 + i);
            if (row_end <= start) continue;
            const int n = static_cast<int>(row_end - start);
            block_scores<KL>(r.q + i * r.q_stride + g * hd, k_rows, kv.k_row_bytes, n, hd, s.scale, scores);
            float block_max = kNegInf;
            for (int j = 0; j < n; ++j) block_max = std::max(block_max, scores[j]);
            const float new_max = std::max(r.m[row], block_max);
            const float correction = std::exp(r.m[row] - new_max);
            r.l[row] = r.l[row] * correction + exp_and_sum(scores, n, new_max);
            r.m[row] = new_max;
            accumulate<VL>(r.acc + static_cast<int64_t>(row) * hd, v_rows, kv.v_row_bytes, scores, n, correction, hd);
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
