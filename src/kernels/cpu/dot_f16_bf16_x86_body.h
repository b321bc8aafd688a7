// F16 and BF16 weights against widened activations (ActLayout::Widened):
// the F16 / BF16 activation rows are widened back to F32 once per matmul,
// so the tiles here convert only their weights, where the multi-token dots
// (dot_x86_body.h) convert every activation element again for every weight
// row. Included after dot_rows_x86_body.h (the weight prefetch stream),
// same namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_f16_bf16_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_ROWS_X86)
#error "dot_f16_bf16_x86_body.h: include kernels/cpu/dot_rows_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_F16_BF16_X86 1

// VNNI tiles of NR F16 or BF16 (kBf16) rows x NT widened tokens: each
// (row, token) does float_tile's (F16) or bf16_tile's (BF16) arithmetic with
// its two accumulator sets in one 512-bit accumulator, 16 elements a step.
// F16: set 0 in the low half (the even 8-element steps), set 1 in the high
// one, a last odd step into the low half. BF16: lanes in element order, so
// the even lanes are set 0 (bf16_tile's even elements) and the odd lanes set
// 1, put back in that order at the end. 2 x 8 accumulators keep both FMA
// pipes busy, where one row against four tokens waited on the FMA latency
// of its four chains. A weight vector: 16 halves through F16C, or 16 BF16
// zero-extended and shifted into place.
template <bool kBf16, bool kOn = kVnni>
inline __m512 widen16(const uint16_t* p) {
    if constexpr (kBf16) {
        const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
    } else {
        return load16(p);
    }
}

template <bool kBf16, int NR, int NT, bool kOn = kVnni>
void widened_tile(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t act_stride, float* out,
                  size_t out_stride) {
    const uint16_t* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const uint16_t*>(w + static_cast<size_t>(r) * w_stride);
    const float* y[NT];
    act_rows(act, act_stride, y);
    __m512 both[NR][NT];
    for (auto& row : both) {
        for (__m512& v : row) v = _mm512_setzero_ps();
    }
    // The rows side by side as one prefetched stream (dot_rows_x86_body.h):
    // without it, two rows read at once ran one-token decode 2.5x slower.
    const char* pf = prefetch_start<NR>(w, w_stride);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm_prefetch(pf + i * 2 * NR, _MM_HINT_T0);  // NR rows x 16 halves a step
        __m512 wv[NR];
        for (int r = 0; r < NR; ++r) wv[r] = widen16<kBf16>(x[r] + i);
        for (int t = 0; t < NT; ++t) {
            const __m512 yv = _mm512_loadu_ps(y[t] + i);
            for (int r = 0; r < NR; ++r) both[r][t] = _mm512_fmadd_ps(wv[r], yv, both[r][t]);
        }
    }
    if (!kBf16 && i + 8 <= n) {  // F16's odd last step: set 0, the low halves
        for (int r = 0; r < NR; ++r) {
            const __m512 wv = _mm512_castps256_ps512(load8(x[r] + i));
            for (int t = 0; t < NT; ++t) {
                const __m512 yv = _mm512_castps256_ps512(_mm256_loadu_ps(y[t] + i));
                both[r][t] = _mm512_mask3_fmadd_ps(wv, yv, both[r][t], 0x00FF);
            }
        }
        i += 8;
    }
    for (int r = 0; r < NR; ++r) {
        __m256 acc[2][NT];
        float tail[NT] = {};
        for (int t = 0; t < NT; ++t) {
            __m512 sets = both[r][t];
            if constexpr (kBf16) {  // even lanes, then odd ones
                const __m512i order = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
                sets = _mm512_permutexvar_ps(order, sets);
            }
            acc[0][t] = _mm512_castps512_ps256(sets);
            acc[1][t] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sets), 1));
        }
        for (int64_t k = i; k < n; ++k) {
            const float wk = kBf16 ? bf16_f32(x[r][k]) : to_f32(x[r][k]);
            for (int t = 0; t < NT; ++t) tail[t] += wk * y[t][k];
        }
        float row_out[NT];
        finish<NT>(acc, tail, row_out);
        for (int t = 0; t < NT; ++t) out[static_cast<size_t>(t) * out_stride + r] = row_out[t];
    }
}

// NR rows against n_act (1..8) tokens.
template <bool kBf16, int NR, bool kOn = kVnni>
void widened_tokens(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n_act, float* o,
                    size_t os) {
    switch (n_act) {
        case 1: return widened_tile<kBf16, NR, 1>(n, w, ws, a, as, o, os);
        case 2: return widened_tile<kBf16, NR, 2>(n, w, ws, a, as, o, os);
        case 3: return widened_tile<kBf16, NR, 3>(n, w, ws, a, as, o, os);
        case 4: return widened_tile<kBf16, NR, 4>(n, w, ws, a, as, o, os);
        case 5: return widened_tile<kBf16, NR, 5>(n, w, ws, a, as, o, os);
        case 6: return widened_tile<kBf16, NR, 6>(n, w, ws, a, as, o, os);
        case 7: return widened_tile<kBf16, NR, 7>(n, w, ws, a, as, o, os);
        default: return widened_tile<kBf16, NR, 8>(n, w, ws, a, as, o, os);
    }
}

// VNNI: rows in pairs (an odd last one alone) against the widened tokens.
template <bool kBf16, bool kOn = kVnni>
void widened_rows(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act, size_t act_stride,
                  int n_act, float* out, size_t out_stride) {
    static_assert(kMaxDotTokens == 8);
    int r = 0;
    for (; r + 2 <= n_rows; r += 2) {
        widened_tokens<kBf16, 2>(n, w + static_cast<size_t>(r) * w_stride, w_stride, act, act_stride, n_act, out + r,
                                 out_stride);
    }
    if (r < n_rows) {
        widened_tokens<kBf16, 1>(n, w + static_cast<size_t>(r) * w_stride, w_stride, act, act_stride, n_act, out + r,
                                 out_stride);
    }
}

// F16 weights against widened activations (ActLayout::Widened): F16Tile's
// bits, but each activation element is converted once per matmul instead
// of once per weight row (four conversions for every four FMAs before, the
// conversions the slower). VNNI: the 2-row x 8-token tiles above; AVX2 (16
// registers): row by row, 4 tokens at a time. (BF16 has widened tiles on
// VNNI only: its AVX2 sets need the activations' even and odd elements
// apart.)
inline void f16_widened_rows(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act,
                             size_t act_stride, int n_act, float* out, size_t out_stride) {
    if constexpr (kVnni) {
        widened_rows<false>(n, w, w_stride, n_rows, act, act_stride, n_act, out, out_stride);
    } else {
        float row_out[kMaxDotTokens];
        for (int r = 0; r < n_rows; ++r) {
            multi_dot<F16WidenedTile>(n, w + static_cast<size_t>(r) * w_stride, act, act_stride, n_act, row_out);
            for (int t = 0; t < n_act; ++t) out[static_cast<size_t>(t) * out_stride + r] = row_out[t];
        }
    }
}
