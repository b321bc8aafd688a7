// Tiled Q4_K kernels over activations prepared as ActSuperQ8_K
// (kernels/act_quads.h). A super-block's 256 weights are unpacked into eight
// vectors whose int32 lane L holds four elements of sub-block L, so eight
// chained byte dots leave each sub-block's exact integer dot in its own lane;
// the 6-bit scales and mins, unpacked once per row and block, then apply as
// per-lane floats: one convert, one multiply and two FMAs per token and
// block. Lane sums are equal integers on AVX2 and VNNI and every tile takes
// the same float steps, so results are bit-identical across tiles, token
// counts and levels. Included after dot_quads_x86_body.h, same namespace.

// The eight 6-bit scales and mins of a Q4_K block as bytes, 32 bits at a
// time (the bit layout kquant_scale_min reads one value at a time).
inline void q4_k_scales(const uint8_t* s, uint64_t* sc, uint64_t* mn) {
    uint32_t a, b, c;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + 4, 4);
    std::memcpy(&c, s + 8, 4);
    const uint32_t sc_hi = (c & 0x0F0F0F0F) | (((a >> 6) & 0x03030303) << 4);
    const uint32_t mn_hi = ((c >> 4) & 0x0F0F0F0F) | (((b >> 6) & 0x03030303) << 4);
    *sc = (a & 0x3F3F3F3F) | (uint64_t{sc_hi} << 32);
    *mn = (b & 0x3F3F3F3F) | (uint64_t{mn_hi} << 32);
}

// The odd lanes (high nibbles) of every integer dot below hold 16 times the
// sub-block's dot: VNNI multiplies a high nibble in place (byte & 0xF0)
// rather than shifting it down, and AVX2 scales its sums to match. Their
// scale is d * scale_L / 16, so every product is the same real number, and
// a power of two changes no rounding.
inline __m256i nibble_shift() { return _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4); }

// d * scale_L (over 16 in odd lanes) and dmin * min_L in lane L.
struct SuperScales {
    __m256 a, b;
};

inline __m256 byte_lanes(uint64_t v8) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(v8))));
}

inline SuperScales super_scales(const BlockQ4_K& x) {
    uint64_t sc8, mn8;
    q4_k_scales(x.scales, &sc8, &mn8);
    const float d = h2f(x.d), d16 = d * (1.0f / 16);
    return {_mm256_mul_ps(byte_lanes(sc8), _mm256_setr_ps(d, d16, d, d16, d, d16, d, d16)),
            _mm256_mul_ps(byte_lanes(mn8), _mm256_set1_ps(h2f(x.dmin)))};
}

// The weight vectors: w[j] lane 2c (2c+1) holds the low (high) nibbles of
// dword j of the block's 32-byte chunk c, i.e. elements 4j..4j+3 of
// sub-block 2c (2c+1). A 4 x 8 dword transpose of the chunks, then each
// column spread to lane pairs.
inline void super_weights(const BlockQ4_K& x, __m256i (&w)[8]) {
    const __m256i c0 = load256(x.qs), c1 = load256(x.qs + 32), c2 = load256(x.qs + 64), c3 = load256(x.qs + 96);
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    // cols[k] = [column k | column k + 4], column j being dword j of chunks 0..3.
    const __m256i cols[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                             _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    const __m256i lower = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3), upper = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
    const __m256i shift = nibble_shift(), m4 = _mm256_set1_epi8(0x0F);
    for (int k = 0; k < 4; ++k) {
        w[k] = _mm256_and_si256(_mm256_srlv_epi32(_mm256_permutevar8x32_epi32(cols[k], lower), shift), m4);
        w[k + 4] = _mm256_and_si256(_mm256_srlv_epi32(_mm256_permutevar8x32_epi32(cols[k], upper), shift), m4);
    }
}

// One token's side of a block, loaded once for every row of a tile.
struct SuperAct {
    __m256i q[8];
    __m256 d, msum;
};

inline SuperAct load_super_act(const uint8_t* sup) {
    SuperAct a;
    for (int j = 0; j < 8; ++j) a.q[j] = load256(quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * j));
    a.d = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, d))));
    a.msum = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, msum))));
    return a;
}

// Exact per-sub-block dots (odd lanes times 16) on AVX2, whose weights are
// shifted down as maddubs needs (VNNI's 512-bit kernels below keep high
// nibbles in place): the eight byte-pair sums add up in int16 first (each
// at most 2 * 15 * 128, eight of them fit), and the odd lanes scale after.
inline __m256i super_dot(const __m256i (&w)[8], const __m256i (&y)[8]) {
    __m256i s16 = _mm256_maddubs_epi16(w[0], y[0]);
    for (int j = 1; j < 8; ++j) s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w[j], y[j]));
    return _mm256_sllv_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)), nibble_shift());
}

// acc += d_y (d sc_L dot_L) - dmin m_L d_y sum_L, lane by lane.
inline __m256 super_fma(__m256i dot, const SuperScales& s, __m256 d, __m256 msum, __m256 acc) {
    acc = _mm256_fmadd_ps(s.a, _mm256_mul_ps(_mm256_cvtepi32_ps(dot), d), acc);
    return _mm256_fnmadd_ps(s.b, msum, acc);
}

// Prepared blocks of NT tokens (act: pair rows, see dot_kernels.h).
template <int NT>
using SuperTokens = ActTokens<BlockQ4_K, NT>;

template <int NR>
inline void super_rows_start(const uint8_t* w, size_t w_stride, const BlockQ4_K* (&x)[NR]) {
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const BlockQ4_K*>(w + r * w_stride);
}

// The AVX2 level's tiles, 256-bit.
template <int NR, int NT>
void super_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
                size_t out_stride) {
    const BlockQ4_K* x[NR];
    super_rows_start<NR>(w, w_stride, x);
    const SuperTokens<NT> y(act, stride);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_step<NR, BlockQ4_K, 1>(pf, ib);
        __m256i wq[NR][8];
        SuperScales s[NR];
        for (int r = 0; r < NR; ++r) {
            super_weights(x[r][ib], wq[r]);
            s[r] = super_scales(x[r][ib]);
        }
        for (int t = 0; t < NT; ++t) {
            const SuperAct a = load_super_act(y.quad(t, ib));
            for (int r = 0; r < NR; ++r) acc[r][t] = super_fma(super_dot(wq[r], a.q), s[r], a.d, a.msum, acc[r][t]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        for (int r = 0; r < NR; ++r) out[t * out_stride + r] = hsum_ps(acc[r][t]);
    }
}

// Two rows per 512-bit vector on VNNI (lanes 0-7 the first): each half does
// super_rows' arithmetic for its row, a token's activation fields are
// broadcast to both halves, and the registers hold one set of eight weight
// vectors per row pair, so a tile of 2 rows x 8 tokens fits them all and
// loads each activation field once for both rows.

// Row a's weights w[2i] | w[2i + 1] (high nibbles in place, 16 times their
// value) for i = 0..3, straight from the block's 128 bytes by one
// two-source dword permute and a mask each.
template <bool kOn = kVnni>
inline void super_weights_512(const BlockQ4_K& a, __m512i (&z)[4]) {
    const __m512i v0 = load512(a.qs), v1 = load512(a.qs + 64);
    // Dword j of chunk c is dword 8c + j of (v0, v1).
    const __m512i base = _mm512_setr_epi32(0, 0, 8, 8, 16, 16, 24, 24, 1, 1, 9, 9, 17, 17, 25, 25);
    const __m512i mask = _mm512_set1_epi64(static_cast<long long>(0xF0F0F0F00F0F0F0FULL));
    for (int i = 0; i < 4; ++i) {
        const __m512i idx = _mm512_add_epi32(base, _mm512_set1_epi32(2 * i));
        z[i] = _mm512_and_si512(_mm512_permutex2var_epi32(v0, idx, v1), mask);
    }
}

// w[j] of row a | w[j] of row b, j = 0..7.
template <bool kOn = kVnni>
inline void super_weight_rows(const BlockQ4_K& a, const BlockQ4_K& b, __m512i (&w)[8]) {
    __m512i za[4], zb[4];
    super_weights_512(a, za);
    super_weights_512(b, zb);
    for (int i = 0; i < 4; ++i) {
        w[2 * i] = _mm512_shuffle_i64x2(za[i], zb[i], 0x44);
        w[2 * i + 1] = _mm512_shuffle_i64x2(za[i], zb[i], 0xEE);
    }
}

template <bool kOn = kVnni>
inline __m512 join_halves(__m256 lo, __m256 hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

template <bool kOn = kVnni>
inline __m512i broadcast256(const uint8_t* p) {
    return _mm512_broadcast_i64x4(load256(p));
}

// NR rows (an odd last row is paired with itself) x NT tokens.
template <int NR, int NT>
void super_row_pairs(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
                     size_t out_stride) {
    constexpr int kPairs = (NR + 1) / 2;
    const BlockQ4_K* x[2 * kPairs];
    for (int r = 0; r < 2 * kPairs; ++r) x[r] = reinterpret_cast<const BlockQ4_K*>(w + std::min(r, NR - 1) * w_stride);
    const SuperTokens<NT> y(act, stride);
    __m512 acc[kPairs][NT];
    for (int p = 0; p < kPairs; ++p) {
        for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_step<NR, BlockQ4_K, 1>(pf, ib);
        __m512i wq[kPairs][8];
        __m512 sa[kPairs], sb[kPairs];
        for (int p = 0; p < kPairs; ++p) {
            const BlockQ4_K &a = x[2 * p][ib], &b = x[2 * p + 1][ib];
            super_weight_rows(a, b, wq[p]);
            const SuperScales s0 = super_scales(a), s1 = super_scales(b);
            sa[p] = join_halves(s0.a, s1.a);
            sb[p] = join_halves(s0.b, s1.b);
        }
        for (int t = 0; t < NT; ++t) {
            const uint8_t* sup = y.quad(t, ib);
            __m512i yq[8];
            for (int j = 0; j < 8; ++j) yq[j] = broadcast256(quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * j));
            const __m512 d = _mm512_set1_ps(*reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, d))));
            const __m512 msum = both_halves(
                _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, msum)))));
            for (int p = 0; p < kPairs; ++p) {
                // Two chains of four byte dots: half the latency of one of eight.
                __m512i dot = _mm512_setzero_si512(), dot2 = _mm512_setzero_si512();
                for (int j = 0; j < 4; ++j) dot = _mm512_dpbusd_epi32(dot, wq[p][j], yq[j]);
                for (int j = 4; j < 8; ++j) dot2 = _mm512_dpbusd_epi32(dot2, wq[p][j], yq[j]);
                dot = _mm512_add_epi32(dot, dot2);
                const __m512 a = _mm512_fmadd_ps(sa[p], _mm512_mul_ps(_mm512_cvtepi32_ps(dot), d), acc[p][t]);
                acc[p][t] = _mm512_fnmadd_ps(sb[p], msum, a);
            }
        }
    }
    for (int t = 0; t < NT; ++t) {
        for (int r = 0; r < NR; ++r) {
            const __m512 v = acc[r / 2][t];
            out[t * out_stride + r] = hsum_ps(r % 2 == 0 ? _mm512_castps512_ps256(v) : upper_half(v));
        }
    }
}

// One token (decode): per row, four 512-bit dots over its w[2i] | w[2i + 1]
// and the token's matching activation fields, then the halves' integer sums
// added: the same lane sums as super_dot.
template <int NR>
void super_one_token_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, float* out) {
    const BlockQ4_K* x[NR];
    super_rows_start<NR>(w, w_stride, x);
    const SuperTokens<1> y(act, 0);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    const char* pf = prefetch_start<NR>(w, w_stride);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_step<NR, BlockQ4_K, 1>(pf, ib);
        const uint8_t* sup = y.quad(0, ib);
        __m512i yq[4];
        for (int i = 0; i < 4; ++i) {
            const uint8_t* f = quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * 2 * i);
            yq[i] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(f)), load256(f + 2 * kQuadField), 1);
        }
        const __m256 d = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, d))));
        const __m256 msum =
            _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, msum))));
        for (int r = 0; r < NR; ++r) {
            __m512i z[4];
            super_weights_512(x[r][ib], z);
            __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), z[0], yq[0]);
            __m512i dot2 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), z[2], yq[2]);
            dot = _mm512_dpbusd_epi32(dot, z[1], yq[1]);
            dot2 = _mm512_dpbusd_epi32(dot2, z[3], yq[3]);
            dot = _mm512_add_epi32(dot, dot2);
            const __m256i dot8 = _mm256_add_epi32(_mm512_castsi512_si256(dot), _mm512_extracti64x4_epi64(dot, 1));
            acc[r] = super_fma(dot8, super_scales(x[r][ib]), d, msum, acc[r]);
        }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum_ps(acc[r]);
}

// Splits a tile into register-sized shapes, all of its tokens at once: on
// VNNI 4 rows for one token (decode) or 2 rows x up to 8 tokens; on AVX2
// 1 row x up to 8 tokens (the weights take half the 16 registers; the
// accumulators spill, which measured faster than unpacking the weights for
// every 2 or 4 tokens).
template <int NR, int NT>
void super_tile(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    constexpr int kRows = kVnni ? (NT == 1 ? 4 : 2) : 1;
    if constexpr (NR > kRows) {
        super_tile<kRows, NT>(nb, w, ws, a, as, o, os);
        super_tile<NR - kRows, NT>(nb, w + kRows * ws, ws, a, as, o + kRows, os);
    } else if constexpr (kVnni && NT == 1) {
        super_one_token_rows<NR>(nb, w, ws, a, o);
    } else if constexpr (kVnni) {
        super_row_pairs<NR, NT>(nb, w, ws, a, as, o, os);
    } else {
        super_rows<NR, NT>(nb, w, ws, a, as, o, os);
    }
}

template <int NR, int NT>
struct Q4_KSupers {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        super_tile<NR, NT>(n / kQKK, w, ws, a, as, o, os);
    }
};
