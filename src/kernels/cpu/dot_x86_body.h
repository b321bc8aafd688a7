// Bodies of the x86 dot kernels, written once and compiled twice: included
// inside a namespace by dot_avx2.cpp (kVnni = false) and dot_avx512.cpp
// (kVnni = true), each under its own GCC target pragma. Both variants produce
// the same int32 lane sums, so their float results are identical.
// Requires before inclusion: <immintrin.h>, <cstring>, tensor/quant_blocks.h,
// kernels/dot_kernels.h, and `constexpr bool kVnni`.

inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

// 32 nibbles of a legacy block as bytes: element j of the block at byte j.
inline __m256i unpack_nibbles(const uint8_t* qs) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

template <class Block, int NT>
void act_rows(const uint8_t* act, size_t stride, const Block* (&rows)[NT]) {
    for (int t = 0; t < NT; ++t) rows[t] = reinterpret_cast<const Block*>(act + static_cast<size_t>(t) * stride);
}

// Two interleaved accumulator sets (even and odd blocks) hide the FMA latency
// when there is a single token. Every token count uses the same two sets, so
// a token's result does not depend on how many tokens share the call.
template <int NT>
inline constexpr int kAccSets = 2;

template <int NT>
void finish(const __m256 (&acc)[kAccSets<NT>][NT], const float* extra, float* out) {
    for (int t = 0; t < NT; ++t) {
        __m256 s = acc[0][t];
        if constexpr (kAccSets<NT> == 2) s = _mm256_add_ps(s, acc[1][t]);
        out[t] = hsum_ps(s) + (extra ? extra[t] : 0.0f);
    }
}

// isum + madd(p, s): VNNI fuses the pair (vpdpwssd); the int32 sums are equal.
// A template so the branch not taken is never compiled for the wrong target.
template <bool kUseVnni = kVnni>
inline __m256i madd_add(__m256i isum, __m256i p, __m256i s) {
    if constexpr (kUseVnni) {
        return _mm256_dpwssd_epi32(isum, p, s);
    } else {
        return _mm256_add_epi32(isum, _mm256_madd_epi16(p, s));
    }
}

// Q6_K x Q8_K: d d_y sum_g sc_g (dot_g(q) - 32 bsum_g), all in int32 lanes.
template <int NT>
void q6_k_tile(int64_t nb, const BlockQ6_K* x, const uint8_t* act, size_t stride, float* out) {
    const BlockQ8_K* y[NT];
    act_rows(act, stride, y);
    __m256 acc[1][NT] = {};
    const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x30);
    for (int64_t ib = 0; ib < nb; ++ib) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[ib].scales)));
        __m256i isum[NT];
        for (int t = 0; t < NT; ++t) {
            // Offset term: 32 * sum_g sc_g * bsum_g, spread over the lanes.
            isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                       _mm256_slli_epi32(_mm256_madd_epi16(load256(y[t][ib].bsums), sc16), 5));
        }
        // Scales 0..7 and 8..15 each in both 128-bit lanes.
        const __m256i sc_half[2] = {_mm256_permute2x128_si256(sc16, sc16, 0x00),
                                    _mm256_permute2x128_si256(sc16, sc16, 0x11)};
        for (int h = 0; h < 2; ++h) {
            const __m256i sc_h = sc_half[h];
            const __m256i ql0 = load256(x[ib].ql + 64 * h), ql1 = load256(x[ib].ql + 64 * h + 32);
            const __m256i qh = load256(x[ib].qh + 32 * h);
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2)),
                _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m2)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2)),
            };
            for (int i = 0; i < 4; ++i) {
                // (sc_g x 8 | sc_g+1 x 8), g = 8h + 2i, by one shuffle of scale half h.
                const __m256i sv = _mm256_shuffle_epi8(
                    sc_h, _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(0x0302 + 0x0404 * i)),
                                           _mm_set1_epi16(static_cast<short>(0x0100 + 0x0404 * i))));
                for (int t = 0; t < NT; ++t) {
                    const __m256i p = _mm256_maddubs_epi16(q[i], load256(y[t][ib].qs + 128 * h + 32 * i));
                    isum[t] = madd_add(isum[t], p, sv);
                }
            }
        }
        const float d = h2f(x[ib].d);
        for (int t = 0; t < NT; ++t) {
            acc[0][t] = _mm256_fmadd_ps(_mm256_set1_ps(d * y[t][ib].d), _mm256_cvtepi32_ps(isum[t]), acc[0][t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[0][t]);
}

// 8 floats from F32 or F16 storage (plain functions: lambdas returning
// vectors lose the target pragma when the build has no -march=native).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline float to_f32(float e) { return e; }
inline float to_f32(uint16_t e) { return h2f(e); }

// F32 / F16 weights with same-typed activations; a scalar tail for n % 8.
template <int NT, bool kHalf>
void float_tile(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
    using Elem = std::conditional_t<kHalf, uint16_t, float>;
    const Elem* x = static_cast<const Elem*>(w);
    const Elem* y[NT];
    act_rows(act, stride, y);
    __m256 acc[kAccSets<NT>][NT] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int set = static_cast<int>((i / 8) % kAccSets<NT>);
        const __m256 wv = load8(x + i);
        for (int t = 0; t < NT; ++t) acc[set][t] = _mm256_fmadd_ps(wv, load8(y[t] + i), acc[set][t]);
    }
    float tail[NT] = {};
    for (; i < n; ++i) {
        for (int t = 0; t < NT; ++t) tail[t] += to_f32(x[i]) * to_f32(y[t][i]);
    }
    finish<NT>(acc, tail, out);
}

// Turns a tile template into a MultiDotFn by switching on the token count;
// more than 4 tokens run as a 4-token tile and the rest (a token's result
// does not depend on the tile).
template <template <int> class Tile>
void multi_dot(int64_t n, const void* w, const uint8_t* act, size_t stride, int n_act, float* out) {
    switch (n_act) {
        case 1: Tile<1>::run(n, w, act, stride, out); return;
        case 2: Tile<2>::run(n, w, act, stride, out); return;
        case 3: Tile<3>::run(n, w, act, stride, out); return;
        case 4: Tile<4>::run(n, w, act, stride, out); return;
        default:
            Tile<4>::run(n, w, act, stride, out);
            multi_dot<Tile>(n, w, act + 4 * stride, stride, n_act - 4, out + 4);
            return;
    }
}

template <int NT>
struct Q6_KTile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) {
        q6_k_tile<NT>(n / kQKK, static_cast<const BlockQ6_K*>(w), a, s, o);
    }
};
template <int NT>
struct F32Tile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { float_tile<NT, false>(n, w, a, s, o); }
};
template <int NT>
struct F16Tile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { float_tile<NT, true>(n, w, a, s, o); }
};

