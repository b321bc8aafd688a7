// Bodies of the x86 dot kernels, written once and compiled twice: included
// inside a namespace by dot_avx2.cpp (kVnni = false) and dot_avx512.cpp
// (kVnni = true), each under its own GCC target pragma. Both variants produce
// the same int32 lane sums, so their float results are identical.
// Requires before inclusion: x86_body_context.h (checked below) and
// `constexpr bool kVnni`.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#define TESSERA_BODY_DOT_X86 1

inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

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

// 8 floats from F32 or F16 storage (plain functions: lambdas returning
// vectors lose the target pragma when the build has no -march=native).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
// 16 of them (VNNI level only: templates, so the AVX2 build never compiles
// them).
template <bool kOn = kVnni>
inline __m512 load16(const float* p) {
    return _mm512_loadu_ps(p);
}
template <bool kOn = kVnni>
inline __m512 load16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// [lo | hi] (AVX-512F: no DQ insert).
template <bool kOn = kVnni>
inline __m512 join_halves(__m256 lo, __m256 hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}
inline float to_f32(float e) { return e; }
inline float to_f32(uint16_t e) { return h2f(e); }

// F32 / F16 weights (WElem float / uint16_t) with activations of AElem: the
// same-typed rows of activation_type_for, or for F16 weights those rows
// widened to F32 once per matmul (ActLayout::Widened), which load as the
// very floats F16C made of them here. Step k (8 elements) goes into
// accumulator set k % 2, then a scalar tail for n % 8. On VNNI one 512-bit
// FMA does two consecutive steps, set 0 in its low half and set 1 in its
// high one: the same lanes, the same bits as AVX2's two 256-bit FMAs, at
// twice the rate. (Indexed by a run-time set, as this loop once was, GCC kept
// the accumulators in memory and every FMA waited on a store: F16 weights
// with 4 tokens ran at 16 G multiply-adds/s.)
template <int NT, class WElem, class AElem>
inline void float_steps(const WElem* x, const AElem* const (&y)[NT], int64_t n, __m256 (&acc)[2][NT]) {
    int64_t i = 0;
    if constexpr (kVnni) {
        __m512 both[NT];
        for (int t = 0; t < NT; ++t) both[t] = join_halves(acc[0][t], acc[1][t]);
        for (; i + 16 <= n; i += 16) {
            const __m512 wv = load16(x + i);
            for (int t = 0; t < NT; ++t) both[t] = _mm512_fmadd_ps(wv, load16(y[t] + i), both[t]);
        }
        for (int t = 0; t < NT; ++t) {
            acc[0][t] = _mm512_castps512_ps256(both[t]);
            acc[1][t] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(both[t]), 1));
        }
    } else {
        for (; i + 16 <= n; i += 16) {
            const __m256 w0 = load8(x + i), w1 = load8(x + i + 8);
            for (int t = 0; t < NT; ++t) {
                acc[0][t] = _mm256_fmadd_ps(w0, load8(y[t] + i), acc[0][t]);
                acc[1][t] = _mm256_fmadd_ps(w1, load8(y[t] + i + 8), acc[1][t]);
            }
        }
    }
    if (i + 8 <= n) {  // an even step: set 0
        const __m256 wv = load8(x + i);
        for (int t = 0; t < NT; ++t) acc[0][t] = _mm256_fmadd_ps(wv, load8(y[t] + i), acc[0][t]);
    }
}

template <int NT, class WElem, class AElem = WElem>
void float_tile(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
    const WElem* x = static_cast<const WElem*>(w);
    const AElem* y[NT];
    act_rows(act, stride, y);
    static_assert(kAccSets<NT> == 2);
    __m256 acc[2][NT] = {};
    float_steps<NT>(x, y, n, acc);
    float tail[NT] = {};
    for (int64_t i = n - n % 8; i < n; ++i) {
        for (int t = 0; t < NT; ++t) tail[t] += to_f32(x[i]) * to_f32(y[t][i]);
    }
    finish<NT>(acc, tail, out);
}

// BF16 weights with BF16 activations. A BF16 value is the top half of an
// F32, so 16 of them load as F32s without a shuffle: shifted up 16 bits
// (the even elements) and masked (the odd ones), each half with its own
// accumulator set; a scalar tail for n % 16.
inline float bf16_f32(uint16_t e) {
    const uint32_t bits = uint32_t{e} << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <int NT>
void bf16_tile(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
    const uint16_t* x = static_cast<const uint16_t*>(w);
    const uint16_t* y[NT];
    act_rows(act, stride, y);
    static_assert(kAccSets<NT> == 2);
    __m256 acc[2][NT] = {};
    const __m256i odd = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i wv = load256(x + i);
        const __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(wv, 16));
        const __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(wv, odd));
        for (int t = 0; t < NT; ++t) {
            const __m256i yv = load256(y[t] + i);
            acc[0][t] = _mm256_fmadd_ps(we, _mm256_castsi256_ps(_mm256_slli_epi32(yv, 16)), acc[0][t]);
            acc[1][t] = _mm256_fmadd_ps(wo, _mm256_castsi256_ps(_mm256_and_si256(yv, odd)), acc[1][t]);
        }
    }
    float tail[NT] = {};
    for (; i < n; ++i) {
        for (int t = 0; t < NT; ++t) tail[t] += bf16_f32(x[i]) * bf16_f32(y[t][i]);
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
struct F32Tile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { float_tile<NT, float>(n, w, a, s, o); }
};
template <int NT>
struct F16Tile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) {
        float_tile<NT, uint16_t>(n, w, a, s, o);
    }
};
template <int NT>
struct F16WidenedTile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) {
        float_tile<NT, uint16_t, float>(n, w, a, s, o);
    }
};

template <int NT>
struct BF16Tile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { bf16_tile<NT>(n, w, a, s, o); }
};
