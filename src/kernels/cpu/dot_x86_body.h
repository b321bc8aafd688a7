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

// Element formats of the float tiles: 8 floats from storage, and one for
// the tail (plain functions: lambdas returning vectors lose the target
// pragma when the build has no -march=native). A BF16 value is the top half
// of an F32, so a 16-bit shift converts it exactly.
struct F32Elems {
    using Elem = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static float to_f32(float e) { return e; }
};
struct F16Elems {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static float to_f32(uint16_t e) { return h2f(e); }
};
struct BF16Elems {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float to_f32(uint16_t e) {
        const uint32_t bits = uint32_t{e} << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
};

// F32 / F16 / BF16 weights with same-typed activations; a scalar tail for n % 8.
template <int NT, class E>
void float_tile(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
    using Elem = typename E::Elem;
    const Elem* x = static_cast<const Elem*>(w);
    const Elem* y[NT];
    act_rows(act, stride, y);
    __m256 acc[kAccSets<NT>][NT] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int set = static_cast<int>((i / 8) % kAccSets<NT>);
        const __m256 wv = E::load8(x + i);
        for (int t = 0; t < NT; ++t) acc[set][t] = _mm256_fmadd_ps(wv, E::load8(y[t] + i), acc[set][t]);
    }
    float tail[NT] = {};
    for (; i < n; ++i) {
        for (int t = 0; t < NT; ++t) tail[t] += E::to_f32(x[i]) * E::to_f32(y[t][i]);
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

template <int NT, class E>
struct FloatTile {
    static void run(int64_t n, const void* w, const uint8_t* a, size_t s, float* o) { float_tile<NT, E>(n, w, a, s, o); }
};
template <int NT>
using F32Tile = FloatTile<NT, F32Elems>;
template <int NT>
using F16Tile = FloatTile<NT, F16Elems>;
template <int NT>
using BF16Tile = FloatTile<NT, BF16Elems>;
