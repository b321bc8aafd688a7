// Vector primitives over 16 floats (AVX-512F) for the kernel bodies written
// once over a struct `Ops` (attention, row kernels); the same operations as
// simd_ops_avx2_body.h, so a body gives the same bits at both widths.
// Included inside a file's own namespace, after x86_body_context.h and
// vec_exp_body.h, within `#pragma GCC target("avx2,fma,f16c,avx512f")`.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "simd_ops_avx512_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_VEC_EXP)
#error "simd_ops_avx512_body.h: include kernels/cpu/vec_exp_body.h first, same namespace"
#endif
#define TESSERA_BODY_SIMD_OPS_AVX512 1
#define TESSERA_BODY_SIMD_OPS 1

struct Ops {
    using V = __m512;
    using Mask = __mmask16;
    static constexpr int W = 16;
    static V zero() { return _mm512_setzero_ps(); }
    static V set1(float x) { return _mm512_set1_ps(x); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V div(V a, V b) { return _mm512_div_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
    // b where a is NaN, as std::min/std::max with a NaN first argument.
    static V min(V a, V b) { return _mm512_min_ps(a, b); }
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V round(V x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    // 2^n for integral n in [-126, 127].
    static V pow2(V n) {
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
    }
    static V neg_abs(V x) {  // integer OR: _mm512_or_ps needs AVX-512DQ
        return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
    }
    // a where x has its sign bit set (negative, -0, negative NaN), else b.
    static V select_neg(V x, V a, V b) {
        return _mm512_mask_blend_ps(_mm512_cmplt_epi32_mask(_mm512_castps_si512(x), _mm512_setzero_si512()), b, a);
    }

    static Mask less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
    static Mask equal(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
    static Mask not_less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }  // NaN lanes too
    static Mask mask_or(Mask a, Mask b) { return static_cast<Mask>(a | b); }
    static uint32_t bits(Mask m) { return m; }
    static V zero_where(Mask m, V x) { return _mm512_maskz_mov_ps(static_cast<Mask>(~m), x); }

    static float hsum(V v) { return _mm512_reduce_add_ps(v); }
    // (hsum(a), hsum(b), hsum(c), hsum(d)): halves first, then one shared
    // 256-bit reduction tree.
    static __m256 half(V v) {
        return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    }
    static __m128 hsum4(V a, V b, V c, V d) {
        const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(half(a), half(b)), _mm256_hadd_ps(half(c), half(d)));
        return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    }
    static float hmax(V v) { return _mm512_reduce_max_ps(v); }
    // out[k] = hsum(v[k]) and hmax(v[k]) for k < n (out has room for n + W
    // floats: whole vectors are stored, the lanes past n garbage). Every
    // tree pairs a vector's lanes exactly as _mm512_reduce_add_ps does (i
    // with i + 8, then + 4, then i ^ 2, then i ^ 1), the lower lane always
    // the first operand, so each result has hsum's bits (and max's choice
    // between equal zeros) whichever tree and neighbours it goes through.
    // Always inlined, so a caller's small n folds the loops away (called out
    // of line they cost decode attention about 13%).
    // The reduction operators are functors, not lambdas: GCC 12 compiles a
    // lambda's conversion thunk outside the file's target pragma and, where
    // the baseline lacks AVX-512, rejects its vector return (-Wpsabi).
    struct AddOp {
        V operator()(V a, V b) const { return add(a, b); }
    };
    struct MaxOp {
        V operator()(V a, V b) const { return max(a, b); }
    };
    [[gnu::always_inline]] static void hsum_many(const V* v, int n, float* out) { reduce_many(v, n, out, AddOp{}); }
    [[gnu::always_inline]] static void hmax_many(const V* v, int n, float* out) { reduce_many(v, n, out, MaxOp{}); }
    // Sixteen vectors at a time share one transposing tree (31 shuffles, not
    // 4 x 11 through reduce_each4); four or fewer left go through
    // reduce_each4.
    template <class F>
    [[gnu::always_inline]] static void reduce_many(const V* v, int n, float* out, F op) {
        int k = 0;
        for (; n - k > 4; k += 16) {
            V t[16];
            for (int i = 0; i < 16; ++i) t[i] = k + i < n ? v[k + i] : zero();
            store(out + k, reduce_each16(t, op));
        }
        if (k < n) {
            V t[4];
            float res[4];
            for (int i = 0; i < 4; ++i) t[i] = k + i < n ? v[k + i] : zero();
            reduce_each4(t, res, op);
            for (int i = 0; i < 4 && k + i < n; ++i) out[k + i] = res[i];
        }
    }
    // Lane k of the result is the reduction of v[k].
    template <class F>
    static V reduce_each16(const V* v, F op) {
        V a[8], b[4];
        // Lanes 0-7: v[2k]'s lane i op lane i + 8; lanes 8-15: v[2k + 1]'s.
        for (int k = 0; k < 8; ++k) {
            a[k] = op(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44), _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xEE));
        }
        // Quarter q: v[4k + q]'s lane i op lane i + 4.
        for (int k = 0; k < 4; ++k) {
            b[k] = op(_mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0x88), _mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0xDD));
        }
        // Quarter q: lanes 0 op 2 and 1 op 3 of b[2k]'s quarter q, then of b[2k + 1]'s.
        const V c0 = op(_mm512_shuffle_ps(b[0], b[1], 0x44), _mm512_shuffle_ps(b[0], b[1], 0xEE));
        const V c1 = op(_mm512_shuffle_ps(b[2], b[3], 0x44), _mm512_shuffle_ps(b[2], b[3], 0xEE));
        // Lane 4q + j: the reduction of v[4j + q]; then into vector order.
        const V d = op(_mm512_shuffle_ps(c0, c1, 0x88), _mm512_shuffle_ps(c0, c1, 0xDD));
        return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), d);
    }
    // out[k] = hsum(v[k]) and hmax(v[k]) for k < 4 through the same tree.
    static void hsum_each4(const V* v, float* out) { reduce_each4(v, out, AddOp{}); }
    static void hmax_each4(const V* v, float* out) { reduce_each4(v, out, MaxOp{}); }
    template <class F>
    static void reduce_each4(const V* v, float* out, F op) {
        // Quarters [v.q0 op v.q2, v.q1 op v.q3] of two vectors side by side.
        const V ab = op(_mm512_shuffle_f32x4(v[0], v[1], 0x44), _mm512_shuffle_f32x4(v[0], v[1], 0xEE));
        const V cd = op(_mm512_shuffle_f32x4(v[2], v[3], 0x44), _mm512_shuffle_f32x4(v[2], v[3], 0xEE));
        // Quarter k: the low and high 4 lanes of vector k combined.
        const V t = op(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
        const V u = op(t, _mm512_permute_ps(t, 0x4E));
        const V w = op(u, _mm512_permute_ps(u, 0xB1));
        out[0] = _mm512_cvtss_f32(w);
        out[1] = _mm_cvtss_f32(_mm512_extractf32x4_ps(w, 1));
        out[2] = _mm_cvtss_f32(_mm512_extractf32x4_ps(w, 2));
        out[3] = _mm_cvtss_f32(_mm512_extractf32x4_ps(w, 3));
    }
    static V exp(V x) { return vec_exp<Ops>(x); }

    // W halves widened to floats (exact).
    static V load_f16(const uint16_t* p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    // W bfloat16 widened to floats (exact: the top halves).
    static V load_bf16(const uint16_t* p) {
        const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
    }
    // W halves, round-to-nearest-even (the immediate, not MXCSR), as fp32_to_fp16.
    static void store_f16(uint16_t* p, V v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    // W bfloat16 with fp32_to_bf16's integer rounding (see the AVX2 twin).
    static void store_bf16(uint16_t* p, V v) {
        const __m512i u = _mm512_castps_si512(v);
        const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
        const __mmask16 nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
        const __m512i top = _mm512_srli_epi32(u, 16);
        const __m512i lsb = _mm512_and_si512(top, _mm512_set1_epi32(1));
        const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
        const __m512i h = _mm512_mask_or_epi32(rounded, nan, top, _mm512_set1_epi32(0x40));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(h));
    }
};
