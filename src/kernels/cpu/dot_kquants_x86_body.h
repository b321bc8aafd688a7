// Tiled Q4_K, Q5_K and Q6_K kernels over activations prepared as ActSuperQ8_K
// (kernels/act_quads.h). A super-block's 256 weights are unpacked into eight
// vectors whose int32 lane L holds four elements of sub-block L (32
// elements), so chained byte dots leave per-sub-block integer dots in their
// own lanes: fields 0-3 and 4-7 of the activations run as two chains (the
// two halves of each sub-block, which are Q6_K's groups of 16), and the
// scales (and Q4_K's / Q5_K's mins), unpacked once per row and block,
// apply as per-lane floats. Lane sums are equal integers on AVX2 and VNNI
// and every tile takes the same float steps, so results are bit-identical
// across tiles, token counts and levels. Tiles: AVX2 one row x up to 8
// tokens at 256 bits; VNNI 4 rows x one token (decode: a row's fields 2i |
// 2i + 1 in the halves of a vector) or 2 rows x up to 8 tokens (prompts:
// two tokens per vector, as the pair rows lay them out, against a row's
// weights and scales in both halves). Included after
// dot_legacy_tiles_x86_body.h, same namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_kquants_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_LEGACY_TILES_X86)
#error "dot_kquants_x86_body.h: include kernels/cpu/dot_legacy_tiles_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_KQUANTS_X86 1

// ---- Shared pieces ----

// The tokens' ActSuperQ8_K rows, the same for every K-quant (ActTokens picks
// the layout by weight block; Q4_K's is this one).
template <int NT>
using SuperTokens = ActTokens<BlockQ4_K, NT>;

// One token's side of a block on AVX2: the eight qs fields, its scale, and
// the field base for the format's own fields.
struct SuperAct {
    __m256i q[8];
    __m256 d;
    const uint8_t* sup;
};

inline SuperAct load_super_act(const uint8_t* sup) {
    SuperAct a;
    for (int j = 0; j < 8; ++j) a.q[j] = load256(quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * j));
    a.d = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, offsetof(ActSuperQ8_K, d))));
    a.sup = sup;
    return a;
}

inline __m256 load_field_ps(const uint8_t* sup, size_t off) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(sup, off)));
}
inline __m256i load_field(const uint8_t* sup, size_t off) { return load256(quad_field(sup, off)); }

// The two chains' exact lane sums on AVX2: weights are at most 63, so two
// maddubs pair sums (each at most 2 * 63 * 128) add up in int16.
inline void chains256(const __m256i (&w)[8], const __m256i (&y)[8], __m256i& lo, __m256i& hi) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s[4];
    for (int k = 0; k < 4; ++k) {
        const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w[2 * k], y[2 * k]),
                                           _mm256_maddubs_epi16(w[2 * k + 1], y[2 * k + 1]));
        s[k] = _mm256_madd_epi16(p, ones);
    }
    lo = _mm256_add_epi32(lo, _mm256_add_epi32(s[0], s[1]));
    hi = _mm256_add_epi32(hi, _mm256_add_epi32(s[2], s[3]));
}

// 512-bit helpers (templates, so the AVX2 build never compiles them).
// A row's w[2i] | w[2i + 1] to its w[j] in both halves.
template <bool kOn = kVnni>
inline void weights_both_halves(const __m512i (&z)[4], __m512i (&w)[8]) {
    for (int i = 0; i < 4; ++i) {
        w[2 * i] = _mm512_shuffle_i64x2(z[i], z[i], 0x44);
        w[2 * i + 1] = _mm512_shuffle_i64x2(z[i], z[i], 0xEE);
    }
}
// The two chains over both halves (one row, two tokens); two of four
// dots each also halve the latency of one chain of eight (measured faster).
template <bool kOn = kVnni>
inline void chains512(const __m512i (&w)[8], const __m512i (&y)[8], __m512i& lo, __m512i& hi) {
    for (int j = 0; j < 4; ++j) lo = _mm512_dpbusd_epi32(lo, w[j], y[j]);
    for (int j = 4; j < 8; ++j) hi = _mm512_dpbusd_epi32(hi, w[j], y[j]);
}
// One row of one token: z[i] = w[2i] | w[2i + 1] against y[i] = that
// token's fields 2i | 2i + 1; the halves' sums are added, so the lanes
// equal chains256's.
template <bool kOn = kVnni>
inline void chains_one(const __m512i (&z)[4], const __m512i (&y)[4], __m256i& lo, __m256i& hi) {
    const __m512i l = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), z[0], y[0]), z[1], y[1]);
    const __m512i h = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), z[2], y[2]), z[3], y[3]);
    lo = _mm256_add_epi32(lo, _mm256_add_epi32(_mm512_castsi512_si256(l), _mm512_extracti64x4_epi64(l, 1)));
    hi = _mm256_add_epi32(hi, _mm256_add_epi32(_mm512_castsi512_si256(h), _mm512_extracti64x4_epi64(h, 1)));
}

// ---- Q4_K and Q5_K: d * sc_L * dot_L - dmin * m_L * sum_L, times d_y ----

// The eight 6-bit scales and mins of a Q4_K / Q5_K block as bytes, 32 bits
// at a time (the bit layout kquant_scale_min reads one value at a time).
inline void k_scales_mins(const uint8_t* s, uint64_t* sc, uint64_t* mn) {
    uint32_t a, b, c;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + 4, 4);
    std::memcpy(&c, s + 8, 4);
    const uint32_t sc_hi = (c & 0x0F0F0F0F) | (((a >> 6) & 0x03030303) << 4);
    const uint32_t mn_hi = ((c >> 4) & 0x0F0F0F0F) | (((b >> 6) & 0x03030303) << 4);
    *sc = (a & 0x3F3F3F3F) | (uint64_t{sc_hi} << 32);
    *mn = (b & 0x3F3F3F3F) | (uint64_t{mn_hi} << 32);
}

// Per 128-bit half: dwords imm[0], imm[1] of a, then imm[2], imm[3] of b
// (one in-lane two-source shuffle, shufps).
template <int kImm>
inline __m256i shuffle_dwords(__m256i a, __m256i b) {
    return _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), kImm));
}

// Shift of each lane's nibble: lane 2c (2c+1) holds the low (high) nibbles
// of the block's 32-byte chunk c.
inline __m256i nibble_shift() { return _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4); }

inline __m256 byte_lanes(uint64_t v8) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(v8))));
}

// AVX2: w[j] lane L holds the nibbles of elements 4j..4j+3 of sub-block L
// (dword j of chunk L / 2, low or high nibbles), shifted down. Chunks 0, 1
// feed the low 128-bit half and 2, 3 the high one, so with a = [chunk 0 |
// chunk 2] and b = [chunk 1 | chunk 3] (a 16-byte half of each) one in-lane
// two-source shuffle puts dword j of a twice, then of b twice, in each half:
// no transpose or cross-lane permute (135M Q4_K decode on an AVX2-only Zen 3:
// 87-98 -> 103-111 t/s, one thread, alternating binaries).
inline void k_nibbles256(const uint8_t* qs, __m256i (&w)[8]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {  // dwords 4h..4h+3 of each chunk
        const __m256i a = join(qs + 16 * h, qs + 64 + 16 * h), b = join(qs + 32 + 16 * h, qs + 96 + 16 * h);
        const __m256i d[4] = {shuffle_dwords<0x00>(a, b), shuffle_dwords<0x55>(a, b), shuffle_dwords<0xAA>(a, b),
                              shuffle_dwords<0xFF>(a, b)};
        for (int j = 0; j < 4; ++j) w[4 * h + j] = _mm256_and_si256(_mm256_srlv_epi32(d[j], nibble_shift()), m4);
    }
}

// VNNI: the qs dwords of w[2i] | w[2i + 1] (dword j of chunk c is dword
// 8c + j of v0, v1), unmasked: lane 2c's nibbles are low, 2c+1's high.
template <bool kOn = kVnni>
inline __m512i k_nibble_dwords(__m512i v0, __m512i v1, int i) {
    const __m512i idx = _mm512_add_epi32(_mm512_setr_epi32(0, 0, 8, 8, 16, 16, 24, 24, 1, 1, 9, 9, 17, 17, 25, 25),
                                         _mm512_set1_epi32(2 * i));
    return _mm512_permutex2var_epi32(v0, idx, v1);
}

// Q4_K's weights. The odd lanes (high nibbles) of its integer dots hold 16
// times the sub-block's dot: VNNI multiplies a high nibble in place (byte &
// 0xF0) rather than shifting it down, and AVX2 scales its sums to match.
// Their scale is d * scale_L / 16, so every product is the same real number,
// and a power of two changes no rounding.
template <bool kOn = kVnni>
struct Q4_KBits {
    using Block = BlockQ4_K;
    static constexpr float kOddLaneScale = 0.0625f;

    static void weights256(const Block& x, __m256i (&w)[8]) { k_nibbles256(x.qs, w); }
    static __m256i lanes256(__m256i dot) { return _mm256_sllv_epi32(dot, nibble_shift()); }

    // w[2i] | w[2i + 1] with high nibbles in place: one permute and a mask each.
    static void weights512(const Block& x, __m512i (&z)[4]) {
        const __m512i v0 = load512(x.qs), v1 = load512(x.qs + 64);
        const __m512i mask = _mm512_set1_epi64(static_cast<long long>(0xF0F0F0F00F0F0F0FULL));
        for (int i = 0; i < 4; ++i) z[i] = _mm512_and_si512(k_nibble_dwords(v0, v1, i), mask);
    }
};

// Q5_K's weights: Q4_K's nibbles, always shifted down (a fifth bit leaves
// no room to keep a high nibble in place), plus bit L of qh byte 4j + e as
// bit 4 of byte e of w[j]'s lane L (element 32L + 4j + e).
template <bool kOn = kVnni>
struct Q5_KBits {
    using Block = BlockQ5_K;
    static constexpr float kOddLaneScale = 1.0f;

    static void weights256(const Block& x, __m256i (&w)[8]) {
        k_nibbles256(x.qs, w);
        uint32_t qh[8];
        std::memcpy(qh, x.qh, sizeof qh);
        // Bit L of every byte to bit 4: right by L - 4 or left by 4 - L.
        const __m256i down = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 2, 3);
        const __m256i up = _mm256_setr_epi32(4, 3, 2, 1, 0, 0, 0, 0);
        const __m256i bit4 = _mm256_set1_epi8(0x10);
        for (int j = 0; j < 8; ++j) {
            const __m256i h = _mm256_set1_epi32(static_cast<int>(qh[j]));
            w[j] = _mm256_or_si256(w[j], _mm256_and_si256(_mm256_sllv_epi32(_mm256_srlv_epi32(h, down), up), bit4));
        }
    }
    static __m256i lanes256(__m256i dot) { return dot; }

    // w[2i] | w[2i + 1]: the nibble dwords shifted down and masked, and qh
    // dword 2i (2i + 1) rotated per lane, merged by one ternary-logic op.
    static void weights512(const Block& x, __m512i (&z)[4]) {
        const __m512i v0 = load512(x.qs), v1 = load512(x.qs + 64);
        const __m512i qh = _mm512_castsi256_si512(load256(x.qh));
        const __m512i shift = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
        const __m512i rot = _mm512_setr_epi32(4, 3, 2, 1, 0, 31, 30, 29, 4, 3, 2, 1, 0, 31, 30, 29);
        for (int i = 0; i < 4; ++i) {
            const __m512i lo = _mm512_and_si512(_mm512_srlv_epi32(k_nibble_dwords(v0, v1, i), shift),
                                                _mm512_set1_epi8(0x0F));
            const __m512i h_idx = _mm512_setr_epi32(2 * i, 2 * i, 2 * i, 2 * i, 2 * i, 2 * i, 2 * i, 2 * i,
                                                    2 * i + 1, 2 * i + 1, 2 * i + 1, 2 * i + 1, 2 * i + 1,
                                                    2 * i + 1, 2 * i + 1, 2 * i + 1);
            const __m512i hi = _mm512_rolv_epi32(_mm512_permutexvar_epi32(h_idx, qh), rot);
            z[i] = _mm512_ternarylogic_epi32(lo, hi, _mm512_set1_epi8(0x10), 0xF8);  // lo | (hi & 0x10)
        }
    }
};

// The affine K-quant arithmetic over Bits' weight lanes.
template <class Bits, bool kOn = kVnni>
struct AffineKSuper {
    using Block = typename Bits::Block;

    // d * scale_L (times kOddLaneScale in odd lanes) and dmin * min_L in lane L.
    struct Scales {
        __m256 a, b;
    };
    static Scales scales(const Block& x) {
        uint64_t sc8, mn8;
        k_scales_mins(x.scales, &sc8, &mn8);
        constexpr float k = Bits::kOddLaneScale;
        const __m256 d = _mm256_mul_ps(_mm256_set1_ps(h2f(x.d)), _mm256_setr_ps(1, k, 1, k, 1, k, 1, k));
        return {_mm256_mul_ps(byte_lanes(sc8), d),
                _mm256_mul_ps(byte_lanes(mn8), _mm256_set1_ps(h2f(x.dmin)))};
    }
    // acc += d_y (a_L dot_L) - b_L msum_L, lane by lane.
    static __m256 apply(__m256i dot, const Scales& s, __m256 d, __m256 msum, __m256 acc) {
        acc = _mm256_fmadd_ps(s.a, _mm256_mul_ps(_mm256_cvtepi32_ps(dot), d), acc);
        return _mm256_fnmadd_ps(s.b, msum, acc);
    }

    struct Row256 {
        __m256i w[8];
        Scales s;
    };
    static Row256 row256(const Block& x) {
        Row256 r;
        Bits::weights256(x, r.w);
        r.s = scales(x);
        return r;
    }
    static __m256 fma256(const Row256& r, const SuperAct& a, __m256 acc) {
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        chains256(r.w, a.q, lo, hi);
        const __m256i dot = Bits::lanes256(_mm256_add_epi32(lo, hi));
        return apply(dot, r.s, a.d, load_field_ps(a.sup, offsetof(ActSuperQ8_K, msum)), acc);
    }

    static __m256 fma_one(const Block& x, const __m512i (&y)[4], const uint8_t* sup, __m256 d, __m256 acc) {
        __m512i z[4];
        Bits::weights512(x, z);
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        chains_one(z, y, lo, hi);
        __m512 a, b;
        scales_both(x, a, b);
        const Scales s{_mm512_castps512_ps256(a), _mm512_castps512_ps256(b)};
        return apply(_mm256_add_epi32(lo, hi), s, d, load_field_ps(sup, offsetof(ActSuperQ8_K, msum)), acc);
    }

    // One row in both halves of each vector.
    struct RowBoth {
        __m512i w[8];
        __m512 a, b;
    };
    static RowBoth row_both(const Block& x) {
        RowBoth r;
        __m512i z[4];
        Bits::weights512(x, z);
        weights_both_halves(z, r.w);
        scales_both(x, r.a, r.b);
        return r;
    }
    // scales' a and b, each in both halves, from vector ops on the block's
    // first 16 bytes (d, dmin, and the scales' a, b, c dwords, as
    // k_scales_mins names them) rather than scalar unpacking: in lanes
    // [sc_0..7 | mn_0..7], sc_L = a_L & 63 and mn_L = b_L & 63 for L < 4,
    // else (c_L' & 15 or c_L' >> 4) | (a_L' or b_L') >> 6 << 4 with L' = L - 4.
    // Each lane gets the product scales() gives it (d * k exactly, k = 1 or 1/16).
    static void scales_both(const Block& x, __m512& a, __m512& b) {
        static_assert(offsetof(Block, scales) == 4);
        const __m512i v = _mm512_cvtepu8_epi32(load128(&x));  // the block's bytes 0-15, one per lane
        const __m512i sm = _mm512_permutexvar_epi32(
            _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15), v);  // a c | b c
        const __m512i hi = _mm512_shuffle_i32x4(sm, sm, _MM_SHUFFLE(2, 2, 0, 0));  // a a | b b
        const __m512i lo6 = _mm512_and_si512(_mm512_srlv_epi32(sm, _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                                                      0, 4, 4, 4, 4)),
                                             _mm512_setr_epi32(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15,
                                                               15, 15, 15));
        const __m512i top2 = _mm512_and_si512(_mm512_srli_epi32(hi, 2),
                                              _mm512_setr_epi32(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48));
        uint32_t dd;
        std::memcpy(&dd, &x, sizeof dd);  // d, dmin
        const __m128 d2 = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(dd)));
        constexpr float k = Bits::kOddLaneScale;
        const __m512 f = _mm512_mul_ps(
            _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                  _mm512_castps128_ps512(d2)),
            _mm512_setr_ps(1, k, 1, k, 1, k, 1, k, 1, 1, 1, 1, 1, 1, 1, 1));
        const __m512 ab = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_or_si512(lo6, top2)), f);
        a = _mm512_shuffle_f32x4(ab, ab, _MM_SHUFFLE(1, 0, 1, 0));
        b = _mm512_shuffle_f32x4(ab, ab, _MM_SHUFFLE(3, 2, 3, 2));
    }
    // apply for the two tokens of a pair row (`sup` at its first half).
    static __m512 fma_tokens(const RowBoth& r, const __m512i (&y)[8], const uint8_t* sup, __m512 d, __m512 acc) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        chains512(r.w, y, lo, hi);
        const __m512i dot = _mm512_add_epi32(lo, hi);
        acc = _mm512_fmadd_ps(r.a, _mm512_mul_ps(_mm512_cvtepi32_ps(dot), d), acc);
        return _mm512_fnmadd_ps(r.b, _mm512_loadu_ps(quad_field(sup, offsetof(ActSuperQ8_K, msum))), acc);
    }
};

// ---- Q6_K: d * d_y * (sc_2L * lo_L + sc_2L+1 * hi_L) ----
//
// Lane L is sub-block L = elements 128h + 32k .. +31 (h = L / 4, k = L % 4);
// its four bytes in w[j] come from ql dword 16h + 8(k % 2) + j (nibble
// k / 2) and qh dword 8h + j (bit pair k). The chains start from the
// activations' -32 x group sums, so they end at the exact dots of q - 32.

template <bool kOn = kVnni>
struct Q6_KSuper {
    using Block = BlockQ6_K;

    // d * scale of each lane's first (lo) and second (hi) group of 16.
    struct Scales {
        __m256 lo, hi;
    };
    static Scales scales(const Block& x) {
        const __m128i s = _mm_shuffle_epi8(load128(x.scales),
                                           _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
        const __m256 d = _mm256_set1_ps(h2f(x.d));
        return {_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s)), d),
                _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s, 8))), d)};
    }
    // acc += d_y (lo_scale lo + hi_scale hi), lane by lane.
    static __m256 apply(__m256i lo, __m256i hi, const Scales& s, __m256 d, __m256 acc) {
        const __m256 t = _mm256_fmadd_ps(s.hi, _mm256_cvtepi32_ps(hi), _mm256_mul_ps(s.lo, _mm256_cvtepi32_ps(lo)));
        return _mm256_fmadd_ps(t, d, acc);
    }

    struct Row256 {
        __m256i w[8];
        Scales s;
    };
    // Lanes 0-3 (4-7) are h = 0 (1) and k = 0..3. With A = ql dwords
    // 16h + j and B = 16h + 8 + j for j in a group of four (a 16-byte half
    // of each h in a 256-bit join), the 64-bit unpacks of [A_j B_j A_j+1
    // B_j+1] give [A_j B_j A_j B_j]; qh dword 8h + j shifted left by 4 for
    // k = 0, 1 and as it is for k = 2, 3 comes from one two-source in-lane
    // shuffle, after which one shift by (0, 2, 0, 2) brings every lane's bit
    // pair to bits 4-5. No transpose or cross-lane permute (as Q4_K's
    // k_nibbles256; 135M Q6_K decode on an AVX2-only Zen 3, one thread:
    // 54-64 -> 62-81 t/s, the machine too noisy to split the variants).
    static Row256 row256(const Block& x) {
        Row256 r;
        const __m256i lo_shift = _mm256_setr_epi32(0, 0, 4, 4, 0, 0, 4, 4);
        const __m256i hi_shift = _mm256_setr_epi32(0, 2, 0, 2, 0, 2, 0, 2);
        const __m256i m4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
        for (int g = 0; g < 2; ++g) {  // w[4g .. 4g + 3]
            const __m256i a = join(x.ql + 16 * g, x.ql + 64 + 16 * g);
            const __m256i b = join(x.ql + 32 + 16 * g, x.ql + 96 + 16 * g);
            const __m256i ab0 = _mm256_unpacklo_epi32(a, b), ab1 = _mm256_unpackhi_epi32(a, b);
            const __m256i lo_bytes[4] = {_mm256_unpacklo_epi64(ab0, ab0), _mm256_unpackhi_epi64(ab0, ab0),
                                         _mm256_unpacklo_epi64(ab1, ab1), _mm256_unpackhi_epi64(ab1, ab1)};
            const __m256i q = join(x.qh + 16 * g, x.qh + 32 + 16 * g), q4 = _mm256_slli_epi32(q, 4);
            const __m256i hi_bytes[4] = {shuffle_dwords<0x00>(q4, q), shuffle_dwords<0x55>(q4, q),
                                         shuffle_dwords<0xAA>(q4, q), shuffle_dwords<0xFF>(q4, q)};
            for (int i = 0; i < 4; ++i) {
                const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(hi_bytes[i], hi_shift), bits45);
                const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(lo_bytes[i], lo_shift), m4);
                r.w[4 * g + i] = _mm256_or_si256(lo, hi);
            }
        }
        r.s = scales(x);
        return r;
    }
    static __m256 fma256(const Row256& r, const SuperAct& a, __m256 acc) {
        __m256i lo = load_field(a.sup, offsetof(ActSuperQ8_K, neg32));
        __m256i hi = load_field(a.sup, offsetof(ActSuperQ8_K, neg32) + kQuadField);
        chains256(r.w, a.q, lo, hi);
        return apply(lo, hi, r.s, a.d, acc);
    }

    // VNNI: w[2i] | w[2i + 1] by two permutes (low bits from ql, high bit
    // pairs from qh rotated to bits 4-5) and one ternary-logic merge each.
    static void weights512(const Block& x, __m512i (&z)[4]) {
        const __m512i ql0 = load512(x.ql), ql1 = load512(x.ql + 64), qh = load512(x.qh);
        const __m512i lo_shift = _mm512_setr_epi32(0, 0, 4, 4, 0, 0, 4, 4, 0, 0, 4, 4, 0, 0, 4, 4);
        const __m512i hi_rot = _mm512_setr_epi32(4, 2, 0, 30, 4, 2, 0, 30, 4, 2, 0, 30, 4, 2, 0, 30);
        for (int i = 0; i < 4; ++i) {
            const __m512i j = _mm512_set1_epi32(2 * i);
            const __m512i lo_idx =
                _mm512_add_epi32(_mm512_setr_epi32(0, 8, 0, 8, 16, 24, 16, 24, 1, 9, 1, 9, 17, 25, 17, 25), j);
            const __m512i hi_idx =
                _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 1, 1, 1, 1, 9, 9, 9, 9), j);
            const __m512i lo_bytes = _mm512_permutex2var_epi32(ql0, lo_idx, ql1);
            const __m512i lo = _mm512_and_si512(_mm512_srlv_epi32(lo_bytes, lo_shift), _mm512_set1_epi8(0x0F));
            const __m512i hi = _mm512_rolv_epi32(_mm512_permutexvar_epi32(hi_idx, qh), hi_rot);
            z[i] = _mm512_ternarylogic_epi32(lo, hi, _mm512_set1_epi8(0x30), 0xF8);  // lo | (hi & 0x30)
        }
    }
    static __m256 fma_one(const Block& x, const __m512i (&y)[4], const uint8_t* sup, __m256 d, __m256 acc) {
        __m512i z[4];
        weights512(x, z);
        __m256i lo = load_field(sup, offsetof(ActSuperQ8_K, neg32));
        __m256i hi = load_field(sup, offsetof(ActSuperQ8_K, neg32) + kQuadField);
        chains_one(z, y, lo, hi);
        return apply(lo, hi, scales(x), d, acc);
    }

    struct RowBoth {
        __m512i w[8];
        __m512 lo, hi;
    };
    static RowBoth row_both(const Block& x) {
        RowBoth r;
        __m512i z[4];
        weights512(x, z);
        weights_both_halves(z, r.w);
        const Scales s = scales(x);
        r.lo = both_halves(s.lo);
        r.hi = both_halves(s.hi);
        return r;
    }
    static __m512 fma_tokens(const RowBoth& r, const __m512i (&y)[8], const uint8_t* sup, __m512 d, __m512 acc) {
        __m512i lo = load512(quad_field(sup, offsetof(ActSuperQ8_K, neg32)));
        __m512i hi = load512(quad_field(sup, offsetof(ActSuperQ8_K, neg32) + kQuadField));
        chains512(r.w, y, lo, hi);
        const __m512 t = _mm512_fmadd_ps(r.hi, _mm512_cvtepi32_ps(hi), _mm512_mul_ps(r.lo, _mm512_cvtepi32_ps(lo)));
        return _mm512_fmadd_ps(t, d, acc);
    }
};

// ---- Tiles ----

template <class Block, int NR>
inline void super_rows_start(const uint8_t* w, size_t w_stride, const Block* (&x)[NR]) {
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
}

// The AVX2 level's tiles, 256-bit.
template <class F, int NR, int NT>
void super_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
                size_t out_stride) {
    using Block = typename F::Block;
    const Block* x[NR];
    super_rows_start<Block, NR>(w, w_stride, x);
    const SuperTokens<NT> y(act, stride);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    const bool stream = stream_weights<NT>(nb * kQKK);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_step<NR, Block, 1>(pf, ib, stream);
        typename F::Row256 rw[NR];
        for (int r = 0; r < NR; ++r) rw[r] = F::row256(x[r][ib]);
        // Unrolled: left as a loop (GCC 12 did), each token's accumulator
        // and activation pointer went through memory by index. Unrolled, an
        // AVX2-only Zen 3 ran Q4_K rows 1536 x 768 14% faster (kernel_bench
        // --model, six alternations won), Q6_K 576 x 1536 12%, a 135M
        // Q4_K pp512 8% (five of five).
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            const SuperAct a = load_super_act(y.quad(t, ib));
            for (int r = 0; r < NR; ++r) acc[r][t] = F::fma256(rw[r], a, acc[r][t]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        for (int r = 0; r < NR; ++r) out[t * out_stride + r] = hsum_ps(acc[r][t]);
    }
}

// Two tokens per 512-bit vector on VNNI (lanes 0-7 the first, 8-15 the
// second: the pair rows' layout), each half doing the 256-bit arithmetic
// for its token. A row's weights and scales go into both halves once per
// block, and each activation field of a token pair is one plain 512-bit
// load (a byte dot's memory operand). Rows in the halves against each
// token's fields broadcast, as before, spent as many shuffle-unit
// operations (eight field broadcasts a token) as byte dots; here the
// shuffles are the rows' unpack alone. A block's rows go one at a time
// through all token pairs (8 registers of weights live, not 16; Q6_K +8%).
template <class F, int NR, int NT>
void super_token_pairs(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
                       size_t out_stride) {
    static_assert(NT % 2 == 0);
    constexpr int kPairs = NT / 2;
    using Block = typename F::Block;
    const Block* x[NR];
    super_rows_start<Block, NR>(w, w_stride, x);
    const SuperTokens<NT> y(act, stride);
    __m512 acc[NR][kPairs];
    for (int r = 0; r < NR; ++r) {
        for (int p = 0; p < kPairs; ++p) acc[r][p] = _mm512_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_step<NR, Block, 1>(pf, ib, false);
        for (int r = 0; r < NR; ++r) {
            const typename F::RowBoth rw = F::row_both(x[r][ib]);
            for (int p = 0; p < kPairs; ++p) {
                const uint8_t* sup = y.quad(2 * p, ib);
                __m512i yq[8];
                for (int j = 0; j < 8; ++j) yq[j] = load512(quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * j));
                const __m512 d = _mm512_loadu_ps(quad_field(sup, offsetof(ActSuperQ8_K, d)));
                acc[r][p] = F::fma_tokens(rw, yq, sup, d, acc[r][p]);
            }
        }
    }
    store_pair_sums<NR, NT>(acc, out, out_stride);
}

// One token (decode) on VNNI: per row, four 512-bit dots over its w[2i] |
// w[2i + 1] and the token's fields 2i | 2i + 1, the halves then added.
template <class F, int NR, RowPrefetch kPrefetch = RowPrefetch::Stream>
void super_one_token_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, float* out) {
    using Block = typename F::Block;
    const Block* x[NR];
    super_rows_start<Block, NR>(w, w_stride, x);
    const SuperTokens<1> y(act, 0);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    const char* pf = prefetch_start<NR>(w, w_stride);
    const bool stream = stream_weights<1>(nb * kQKK);
    for (int64_t ib = 0; ib < nb; ++ib) {
        prefetch_rows_step<kPrefetch, NR, Block, 1>(pf, ib, stream, x[0] + ib);
        const uint8_t* sup = y.quad(0, ib);
        __m512i yq[4];
        for (int i = 0; i < 4; ++i) {
            const uint8_t* f = quad_field(sup, offsetof(ActSuperQ8_K, qs) + kQuadField * 2 * i);
            yq[i] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(f)), load256(f + 2 * kQuadField), 1);
        }
        const __m256 d = load_field_ps(sup, offsetof(ActSuperQ8_K, d));
        for (int r = 0; r < NR; ++r) acc[r] = F::fma_one(x[r][ib], yq, sup, d, acc[r]);
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum_ps(acc[r]);
}

// Splits a tile into register-sized shapes, all of its tokens at once: on
// VNNI 4 rows for one token (decode) or 2 rows x up to 8 tokens; on AVX2
// 1 row x up to 8 tokens (the weights take half the 16 registers; the
// accumulators spill, which measured faster than unpacking the weights for
// every 2 or 4 tokens).
template <class F, int NR, int NT>
void super_tile(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    constexpr int kRows = kVnni ? (NT == 1 ? 4 : 2) : 1;
    if constexpr (NR > kRows) {
        super_tile<F, kRows, NT>(nb, w, ws, a, as, o, os);
        super_tile<F, NR - kRows, NT>(nb, w + kRows * ws, ws, a, as, o + kRows, os);
    } else if constexpr (kVnni && NT == 1) {
        // Long rows on Zen 4 one after another, as the legacy formats'
        // (dot_legacy_tiles_x86_body.h): 1.1B Q4_K decode, binaries
        // alternated, one thread 26.0-27.6 vs 18.4-21.8 t/s, two threads
        // 46.1-46.8 vs 34.0-36.3 (3 of 3 each). Short rows keep their four
        // rows side by side (one at a time measured slower).
        if (long_row(nb * kQKK) && sequential_decode_rows()) {
            for (int r = 0; r < NR; ++r) {
                super_one_token_rows<F, 1, RowPrefetch::L2Ahead>(nb, w + r * ws, ws, a, o + r);
            }
        } else {
            super_one_token_rows<F, NR>(nb, w, ws, a, o);
        }
    } else if constexpr (kVnni && NT % 2 == 0) {
        super_token_pairs<F, NR, NT>(nb, w, ws, a, as, o, os);
    } else if constexpr (kVnni) {  // the odd last token (token NT - 1: the first of its pair row) alone
        super_token_pairs<F, NR, NT - 1>(nb, w, ws, a, as, o, os);
        super_tile<F, NR, 1>(nb, w, ws, a + (NT - 1) / 2 * as, as, o + (NT - 1) * os, os);
    } else {
        super_rows<F, NR, NT>(nb, w, ws, a, as, o, os);
    }
}

template <int NR, int NT>
struct Q4_KSupers {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        super_tile<AffineKSuper<Q4_KBits<>>, NR, NT>(n / kQKK, w, ws, a, as, o, os);
    }
};
template <int NR, int NT>
struct Q5_KSupers {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        super_tile<AffineKSuper<Q5_KBits<>>, NR, NT>(n / kQKK, w, ws, a, as, o, os);
    }
};
template <int NR, int NT>
struct Q6_KSupers {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        super_tile<Q6_KSuper<>, NR, NT>(n / kQKK, w, ws, a, as, o, os);
    }
};
