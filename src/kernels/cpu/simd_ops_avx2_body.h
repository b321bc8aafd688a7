// Vector primitives over 8 floats (AVX2 + FMA + F16C) for the kernel bodies
// written once over a struct `Ops` (attention, row kernels). Included inside
// a file's own namespace, after <immintrin.h>, <cstdint> and vec_exp_body.h,
// within `#pragma GCC target("avx2,fma,f16c")`: every includer gets its own
// copy, so the linker can never hand one ISA's inline code to another.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "simd_ops_avx2_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_VEC_EXP)
#error "simd_ops_avx2_body.h: include kernels/cpu/vec_exp_body.h first, same namespace"
#endif
#define TESSERA_BODY_SIMD_OPS_AVX2 1
#define TESSERA_BODY_SIMD_OPS 1

struct Ops {
    using V = __m256;
    using Mask = __m256;  // all-ones lanes where true
    static constexpr int W = 8;
    static V zero() { return _mm256_setzero_ps(); }
    static V set1(float x) { return _mm256_set1_ps(x); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V div(V a, V b) { return _mm256_div_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
    // b where a is NaN, as std::min/std::max with a NaN first argument.
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V round(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    // 2^n for integral n in [-126, 127].
    static V pow2(V n) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
    }
    static V neg_abs(V x) { return _mm256_or_ps(x, _mm256_set1_ps(-0.0f)); }
    // a where x has its sign bit set (negative, -0, negative NaN), else b.
    static V select_neg(V x, V a, V b) { return _mm256_blendv_ps(b, a, x); }

    static Mask less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
    static Mask equal(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
    static Mask not_less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }  // NaN lanes too
    static Mask mask_or(Mask a, Mask b) { return _mm256_or_ps(a, b); }
    static uint32_t bits(Mask m) { return static_cast<uint32_t>(_mm256_movemask_ps(m)); }
    static V zero_where(Mask m, V x) { return _mm256_andnot_ps(m, x); }

    static float hsum(V v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    // (hsum(a), hsum(b), hsum(c), hsum(d)) with one shared reduction tree.
    static __m128 hsum4(V a, V b, V c, V d) {
        const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
        return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    }
    static float hmax(V v) {
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        return _mm_cvtss_f32(m);
    }
    // out[k] = hsum(v[k]) and hmax(v[k]) for k < n (out has room for n + W
    // floats, as the AVX-512 twins need), each with the bits of
    // hsum / hmax (lanes paired i with i + 4, then i ^ 2, then i ^ 1, the
    // lower lane first: the AVX-512 twins' order).
    static void hsum_many(const V* v, int n, float* out) { reduce_many<false>(v, n, out); }
    static void hmax_many(const V* v, int n, float* out) { reduce_many<true>(v, n, out); }
    // out[k] = hsum(v[k]) and hmax(v[k]) for k < 4 (the AVX-512 twins share
    // one shuffle tree; here one reduction each is as cheap).
    static void hsum_each4(const V* v, float* out) {
        for (int k = 0; k < 4; ++k) out[k] = hsum(v[k]);
    }
    static void hmax_each4(const V* v, float* out) {
        for (int k = 0; k < 4; ++k) out[k] = hmax(v[k]);
    }
    // The reduction operator: a functor, not a lambda, as GCC 12 compiles a
    // lambda's conversion thunk outside the file's target pragma and, where
    // the baseline lacks AVX, rejects its vector return (-Wpsabi).
    template <bool kMax>
    struct ReduceOp {
        V operator()(V a, V b) const { return kMax ? _mm256_max_ps(a, b) : _mm256_add_ps(a, b); }
    };
    // Eight vectors at a time share one transposing tree (15 shuffles, not
    // 8 x 3); three or fewer left go one by one.
    template <bool kMax>
    static void reduce_many(const V* v, int n, float* out) {
        const ReduceOp<kMax> op;
        int k = 0;
        for (; n - k > 3; k += 8) {
            V t[8];
            for (int i = 0; i < 8; ++i) t[i] = k + i < n ? v[k + i] : zero();
            store(out + k, reduce_each8(t, op));
        }
        for (; k < n; ++k) out[k] = kMax ? hmax(v[k]) : hsum(v[k]);
    }
    // Lane k of the result is the reduction of v[k].
    template <class F>
    static V reduce_each8(const V* v, F op) {
        V a[4];
        // Half h: v[2k + h]'s lane i op lane i + 4.
        for (int k = 0; k < 4; ++k) {
            a[k] = op(_mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x20), _mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x31));
        }
        // Half h: lanes 0 op 2 and 1 op 3 of a[2k]'s half h, then of a[2k + 1]'s.
        const V b0 = op(_mm256_shuffle_ps(a[0], a[1], 0x44), _mm256_shuffle_ps(a[0], a[1], 0xEE));
        const V b1 = op(_mm256_shuffle_ps(a[2], a[3], 0x44), _mm256_shuffle_ps(a[2], a[3], 0xEE));
        // Lane j of the low half: v[2j]'s, of the high half v[2j + 1]'s; then
        // into vector order.
        const V c = op(_mm256_shuffle_ps(b0, b1, 0x88), _mm256_shuffle_ps(b0, b1, 0xDD));
        return _mm256_permutevar8x32_ps(c, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
    static V exp(V x) { return vec_exp<Ops>(x); }

    // W halves widened to floats (exact).
    static V load_f16(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    // W bfloat16 widened to floats (exact: the top halves).
    static V load_bf16(const uint16_t* p) {
        const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
    }
    // W halves, round-to-nearest-even (the immediate, not MXCSR), as fp32_to_fp16.
    static void store_f16(uint16_t* p, V v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    // W bfloat16, the integer rounding of fp32_to_bf16: + 0x7fff + lsb, then
    // the top half; a NaN keeps its top half with the quiet bit set. No
    // non-NaN input wraps around (the largest, -inf, is 0xff800000).
    static void store_bf16(uint16_t* p, V v) {
        const __m256i u = _mm256_castps_si256(v);
        const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
        const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
        const __m256i top = _mm256_srli_epi32(u, 16);
        const __m256i lsb = _mm256_and_si256(top, _mm256_set1_epi32(1));
        const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
        const __m256i quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
        const __m256i h = _mm256_blendv_epi8(rounded, quiet, nan);
        // Every lane is <= 0xffff, so the saturating pack is exact; it works
        // per 128-bit lane, which the permute undoes.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
    }
};
