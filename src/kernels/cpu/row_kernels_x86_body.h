// Bodies of the row kernels (kernels/row_kernels.h), written once over a
// vector-ops struct `Ops` (simd_ops_avx2_body.h / simd_ops_avx512_body.h).
// Included inside a file's own namespace after that struct and
// x86_body_context.h (both checked below).

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "row_kernels_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_SIMD_OPS)
#error "row_kernels_x86_body.h: include kernels/cpu/simd_ops_avx2_body.h or simd_ops_avx512_body.h first (the Ops struct), same namespace"
#endif
#define TESSERA_BODY_ROW_KERNELS_X86 1

// silu(g) * u. With t = e^-|g|, which never overflows, silu(g) = g / (1 + t)
// for g >= 0 and g * t / (1 + t) below: no inf / inf for large |g|.
inline typename Ops::V swiglu_vec(typename Ops::V g, typename Ops::V u) {
    const typename Ops::V t = Ops::exp(Ops::neg_abs(g));
    const typename Ops::V num = Ops::select_neg(g, Ops::mul(g, t), g);
    return Ops::mul(Ops::div(num, Ops::add(Ops::set1(1.0f), t)), u);
}

inline void swiglu(float* gate, const float* up, int64_t n) {
    int64_t k = 0;
    for (; k + Ops::W <= n; k += Ops::W) Ops::store(gate + k, swiglu_vec(Ops::load(gate + k), Ops::load(up + k)));
    if (k == n) return;
    // The tail goes through the same vector code, via a padded copy.
    const auto rest = static_cast<size_t>(n - k);
    float g[Ops::W] = {}, u[Ops::W] = {};
    std::memcpy(g, gate + k, rest * sizeof(float));
    std::memcpy(u, up + k, rest * sizeof(float));
    Ops::store(g, swiglu_vec(Ops::load(g), Ops::load(u)));
    std::memcpy(gate + k, g, rest * sizeof(float));
}

// Adds the 16 double lanes in order, then the elements past the last full 16.
inline double finish_sum_squares(const double* lanes, const float* tail, int64_t n_tail) {
    double sum = 0.0;
    for (int j = 0; j < 16; ++j) sum += lanes[j];
    for (int64_t k = 0; k < n_tail; ++k) sum += static_cast<double>(tail[k]) * tail[k];
    return sum;
}

template <void (*StoreW)(uint16_t*, typename Ops::V), uint16_t (*Scalar)(float)>
void to_half(const float* x, void* dst, int64_t n) {
    auto* out = static_cast<uint16_t*>(dst);
    int64_t k = 0;
    for (; k + Ops::W <= n; k += Ops::W) StoreW(out + k, Ops::load(x + k));
    for (; k < n; ++k) out[k] = Scalar(x[k]);  // the same bits as the vector path
}

// F16 -> F32, exact; F16C for the tail too, so every element converts as
// the dot kernels' loads convert it (a signaling NaN comes out quiet).
inline void from_f16(const void* src, float* dst, int64_t n) {
    const auto* in = static_cast<const uint16_t*>(src);
    int64_t k = 0;
    for (; k + Ops::W <= n; k += Ops::W) Ops::store(dst + k, Ops::load_f16(in + k));
    for (; k < n; ++k) dst[k] = _cvtsh_ss(in[k]);
}

// BF16 -> F32, exact.
inline void from_bf16(const void* src, float* dst, int64_t n) {
    const auto* in = static_cast<const uint16_t*>(src);
    int64_t k = 0;
    for (; k + Ops::W <= n; k += Ops::W) Ops::store(dst + k, Ops::load_bf16(in + k));
    for (; k < n; ++k) dst[k] = bf16_to_fp32(in[k]);
}

inline LogitsStats logits_stats(const float* x, int64_t n) {
    const typename Ops::V inf = Ops::set1(std::numeric_limits<float>::infinity());
    typename Ops::V m0 = Ops::set1(-std::numeric_limits<float>::infinity()), m1 = m0;
    typename Ops::Mask bad0 = Ops::less(m0, m0), bad1 = bad0;  // all false
    int64_t k = 0;
    // Two chains hide the max latency; max(x, m) keeps m where x is NaN.
    for (; k + 2 * Ops::W <= n; k += 2 * Ops::W) {
        const typename Ops::V a = Ops::load(x + k), b = Ops::load(x + k + Ops::W);
        bad0 = Ops::mask_or(bad0, Ops::not_less(a, inf));
        bad1 = Ops::mask_or(bad1, Ops::not_less(b, inf));
        m0 = Ops::max(a, m0);
        m1 = Ops::max(b, m1);
    }
    for (; k < n; k += Ops::W) {  // -inf padding changes neither result
        float pad[Ops::W];
        std::fill(pad, pad + Ops::W, -std::numeric_limits<float>::infinity());
        std::memcpy(pad, x + k, static_cast<size_t>(std::min<int64_t>(Ops::W, n - k)) * sizeof(float));
        const typename Ops::V a = Ops::load(pad);
        bad0 = Ops::mask_or(bad0, Ops::not_less(a, inf));
        m0 = Ops::max(a, m0);
    }
    return LogitsStats{Ops::hmax(Ops::max(m0, m1)), Ops::bits(Ops::mask_or(bad0, bad1)) != 0};
}

inline int64_t first_equal(const float* x, int64_t n, float value) {
    const typename Ops::V v = Ops::set1(value);
    int64_t k = 0;
    for (; k + Ops::W <= n; k += Ops::W) {
        const uint32_t hits = Ops::bits(Ops::equal(Ops::load(x + k), v));
        if (hits != 0) return k + __builtin_ctz(hits);
    }
    for (; k < n; ++k) {
        if (x[k] == value) return k;
    }
    return -1;
}
