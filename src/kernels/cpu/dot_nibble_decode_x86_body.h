// One-token (decode) tiles on AVX-512 for the nibble formats (Q4_0, Q4_1,
// Q5_0, Q5_1): two weight rows per 512-bit vector,
// row 2p in lanes 0-7 and row 2p + 1 in lanes 8-15, against one token's
// activations broadcast to both halves. Each half does exactly quad_rows'
// 256-bit arithmetic for its row, so results are unchanged; but the weight
// unpacking, byte dots, converts and FMAs of two rows issue as one
// instruction each, and a step's block scales come from vector loads and one
// word permute instead of eight scalar loads. Decode of a model larger than
// the caches was then bound by this instruction stream about as much as by
// memory (no longer, see below).
// A 384 x 2048 matrix in L2, one thread, best single call: Q4_0 10.4 ->
// 8.3 us, Q4_1 12.3 -> 9.5, Q5_0 20.9 -> 15.3, Q5_1 22.7 -> 16.6. Q8_0 got
// slower (12.1 -> 14.2 us: its 32-byte blocks need more 16-byte inserts than
// the 256-bit path's joins save), so it stays on quad_rows. The groups of
// Q4_1, Q5_0 and Q5_1 then came from one two-source word permute per row
// and two lane shuffles (row_step_groups; Q4_0 measured slower from memory
// that way): Q4_1 10.4 -> 9.8 us, Q5_0 16.5 -> 15.5, Q5_1 17.7 -> 17.2. A
// row's two-block last step (576-wide rows) reads the tail2 fields as the
// pair tiles do (row_pair_tail2): 576 x 576 in L2, Q4_0 4.5 -> 4.3 us, Q4_1
// 5.4 -> 5.15. On the 1.1B shapes at one thread a copy of this loop that
// only loaded the weights (same loads and prefetches, no arithmetic) read
// them from memory no faster than the loop: decode there is bound by the
// memory stream, not by these instructions. Duplicating the token into both
// halves of its pair row, so the broadcasts became plain 512-bit loads,
// measured slower (Q4_0 in L2 +13%; from memory 8 layers of 1.1B shapes
// +75%, the doubled activations of a 5632-wide row no longer fitting L1).
// Included by dot_avx512.cpp only, after dot_legacy_tiles_x86_body.h (which
// declares row_pair_rows), same namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_nibble_decode_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_LEGACY_TILES_X86)
#error "dot_nibble_decode_x86_body.h: include kernels/cpu/dot_legacy_tiles_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_NIBBLE_DECODE_X86 1

// The 16-byte groups [p0 | p1 | p2 | p3] as one vector.
inline __m512i join4(const void* p0, const void* p1, const void* p2, const void* p3) {
    __m512i v = _mm512_castsi128_si512(load128(p0));
    v = _mm512_inserti32x4(v, load128(p1), 1);
    v = _mm512_inserti32x4(v, load128(p2), 2);
    return _mm512_inserti32x4(v, load128(p3), 3);
}

inline __m512 join_halves(__m256 lo, __m256 hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

// The fifth bits of both rows: each row's qh words in its own half.
template <class Block>
inline void add_pair_fifth_bits(const Block* x0, const Block* x1, __m512i (&q)[4]) {
    int h[2][kQuadBlocks];
    for (int k = 0; k < kQuadBlocks; ++k) {
        std::memcpy(&h[0][k], x0[k].qh, sizeof h[0][k]);
        std::memcpy(&h[1][k], x1[k].qh, sizeof h[1][k]);
    }
    add_fifth_bits_512(_mm512_setr_epi32(h[0][0], h[0][2], 0, 0, h[0][1], h[0][3], 0, 0, h[1][0], h[1][2], 0, 0,
                                         h[1][1], h[1][3], 0, 0),
                       q);
}

// Both groups of one row's full step, [bytes 0..7 | bytes 8..15] of each
// block's qs in step_groups' qword order: one two-source word permute of
// the step's first and last 64 bytes. Two of these and two lane shuffles
// replaced two join4 and two unpacks: 384 x 2048 in L2, Q4_1 10.4 -> 9.8
// us, Q5_0 16.5 -> 15.5, Q5_1 17.7 -> 17.2; from memory Q4_1 measured the
// same. Q4_0 keeps join4: its groups by word permutes (of both rows' 64
// bytes from kFrom, one permute per vector) ran 12% faster in L2 (9.1 ->
// 8.0 us) but 5-8% slower from memory, in 8 layers of 1.1B shapes and in
// 1.1B decode (alternated five and four times); a copy that only loaded the
// weights through those 64-byte loads read as slowly.
template <class Block>
inline constexpr bool kRowStepGroups = !std::is_same_v<Block, BlockQ4_0>;

template <class Block>
inline __m512i row_step_groups(const Block* x) {
    static_assert(offsetof(Block, qs) % 2 == 0 && sizeof(Block) % 2 == 0);
    constexpr int kHi = kQuadBlocks * sizeof(Block) - 64;  // the second load's first byte
    static_assert(kHi > 0 && kHi <= 64 && kHi % 2 == 0);
    // The word of bytes 2i, 2i + 1 of block k's group of byte `from`.
    constexpr auto word = [](int k, int i, int from) {
        const int byte = static_cast<int>(offsetof(Block, qs) + k * sizeof(Block)) + from + 2 * i;
        return byte + 2 <= 64 ? byte / 2 : 32 + (byte - kHi) / 2;
    };
    constexpr auto p = [word](int q) {  // dword q: group 8 * (q / 8), qword q / 2 % 4 (blocks a, c, b, d)
        constexpr int kOrder[4] = {0, 2, 1, 3};
        const int k = kOrder[q / 2 % 4], i = 2 * (q % 2), from = 8 * (q / 8);
        return word(k, i, from) | word(k, i + 1, from) << 16;
    };
    const __m512i idx = _mm512_setr_epi32(p(0), p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10), p(11),
                                          p(12), p(13), p(14), p(15));
    const auto* b = reinterpret_cast<const uint8_t*>(x);
    return _mm512_permutex2var_epi16(load512(b), idx, load512(b + kHi));
}

// Rows x0 and x1's full step (nibble formats): load_weight_quad<4> of each
// row, in the two halves.
template <class Block>
inline WeightPair load_row_pair(const Block* x0, const Block* x1) {
    WeightPair w;
    w.d = row_pair_scales<Block, offsetof(Block, d)>(x0, x1);
    if constexpr (kHasMin<Block>) {
        w.m = row_pair_scales<Block, offsetof(Block, m)>(x0, x1);
    } else {
        w.m = w.d;
    }
    __m512i (&q)[4] = w.q;
    __m512i b07, b8f;
    if constexpr (kRowStepGroups<Block>) {
        const __m512i g0 = row_step_groups(x0), g1 = row_step_groups(x1);
        b07 = _mm512_shuffle_i64x2(g0, g1, 0x44);  // lanes 0-7 of each
        b8f = _mm512_shuffle_i64x2(g0, g1, 0xEE);
    } else {
        const __m512i ab = join4(x0[0].qs, x0[1].qs, x1[0].qs, x1[1].qs);
        const __m512i cd = join4(x0[2].qs, x0[3].qs, x1[2].qs, x1[3].qs);
        b07 = _mm512_unpacklo_epi64(ab, cd);
        b8f = _mm512_unpackhi_epi64(ab, cd);
    }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    q[0] = _mm512_and_si512(b07, m4);
    q[1] = _mm512_and_si512(b8f, m4);
    q[2] = _mm512_and_si512(_mm512_srli_epi16(b07, 4), m4);
    q[3] = _mm512_and_si512(_mm512_srli_epi16(b8f, 4), m4);
    if constexpr (kFifthBit<Block>) add_pair_fifth_bits(x0, x1, q);
    return w;
}

// A partial step (NB < 4 blocks): each row's WeightQuad, side by side.
template <int NB, class Block>
inline WeightPair load_partial_row_pair(const Block* x0, const Block* x1) {
    const WeightQuad w0 = load_weight_quad<NB>(x0), w1 = load_weight_quad<NB>(x1);
    WeightPair w;
    for (int j = 0; j < 4; ++j) w.q[j] = _mm512_inserti64x4(_mm512_castsi256_si512(w0.q[j]), w1.q[j], 1);
    w.d = join_halves(w0.d, w1.d);
    w.m = kHasMin<Block> ? join_halves(w0.m, w1.m) : w.d;
    return w;
}

template <int NP, int NB, class Block>
inline void row_pair_step(const Block* const (&x)[2 * NP], const uint8_t* quad, int64_t ib, __m512 (&acc)[NP]) {
    const ActRegs a = load_act_regs<Block>(quad);
    PairRegs<Block> both;
    for (int j = 0; j < 4; ++j) both.q[j] = both_halves(a.q[j]);
    both.base = both_halves(a.base);
    both.d = both_halves(a.d);
    if constexpr (kHasMin<Block>) both.s = both_halves(a.s);
    for (int p = 0; p < NP; ++p) {
        WeightPair w;
        if constexpr (NB == kQuadBlocks) {
            w = load_row_pair(x[2 * p] + ib, x[2 * p + 1] + ib);
        } else {
            w = load_partial_row_pair<NB>(x[2 * p] + ib, x[2 * p + 1] + ib);
        }
        pair_fma<Block>(w, both, acc[p]);
    }
}

// Four packed fp16 scales (a, b of row 0, a, b of row 1) -> (a a 0 0 b b 0 0)
// of each row in its half, as quad_scales of a two-block step.
inline __m512 tail2_pair_scales(uint64_t h4) {
    const __m512i order = _mm512_setr_epi32(0, 0, 4, 4, 1, 1, 4, 4, 2, 2, 4, 4, 3, 3, 4, 4);  // lane 4: zero
    const __m256 f = _mm256_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(h4)));
    return _mm512_permutexvar_ps(order, _mm512_castps256_ps512(f));
}

// A partial step of a row's last two blocks (at ib) for formats with the
// tail2 fields (576-wide rows: a fifth of their blocks): pair_tail2's two
// byte dots and lane combine, rows x[2p] and x[2p + 1] in the halves, for
// the same lane sums and float steps as row_pair_step<NP, 2>.
template <int NP, class Block>
inline void row_pair_tail2(const Block* const (&x)[2 * NP], const ActTokens<Block, 1>& y, int64_t ib,
                           __m512 (&acc)[NP]) {
    const int64_t iq = ib / kQuadBlocks;
    const ActRegs a = load_act_regs<Block>(y.quad(0, iq));
    const uint8_t* tail = y.quad(0, iq + 1);  // right after the row's last quad
    const __m512i a0 = both_halves(load256(quad_field(tail, 0)));
    const __m512i a1 = both_halves(load256(quad_field(tail, kQuadField)));
    const __m512i base = both_halves(a.base);
    const __m512 d = both_halves(a.d);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int p = 0; p < NP; ++p) {
        const Block* b0 = x[2 * p] + ib;
        const Block* b1 = x[2 * p + 1] + ib;
        const __m512i v = join4(b0[0].qs, b0[1].qs, b1[0].qs, b1[1].qs);
        const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        const __m512i q = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(base, _mm512_unpacklo_epi64(lo, hi), a0),
                                              _mm512_unpackhi_epi64(lo, hi), a1);
        const __m512i sum = _mm512_maskz_add_epi32(0x3333, q, _mm512_shuffle_epi32(q, _MM_PERM_BADC));
        if constexpr (kHasMin<Block>) {
            const __m512 m = tail2_pair_scales(uint64_t{b0[0].m} | uint64_t{b0[1].m} << 16 | uint64_t{b1[0].m} << 32 |
                                              uint64_t{b1[1].m} << 48);
            acc[p] = _mm512_fmadd_ps(m, both_halves(a.s), acc[p]);
        }
        const __m512 wd = tail2_pair_scales(uint64_t{b0[0].d} | uint64_t{b0[1].d} << 16 | uint64_t{b1[0].d} << 32 |
                                           uint64_t{b1[1].d} << 48);
        acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(wd, d), _mm512_cvtepi32_ps(sum), acc[p]);
    }
}

// 2 * NP rows x one token.
template <int NP, class Block>
void row_pair_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, float* out) {
    constexpr int NR = 2 * NP;
    const Block* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
    const ActTokens<Block, 1> y(act, 0);
    __m512 acc[NP];
    for (int p = 0; p < NP; ++p) acc[p] = _mm512_setzero_ps();
    const char* pf = prefetch_start<NR>(w, w_stride);
    const bool stream = stream_weights<1>(nb * kQK);
    int64_t ib = 0;
    for (; ib + kQuadBlocks <= nb; ib += kQuadBlocks) {
        prefetch_step<NR, Block, kQuadBlocks>(pf, ib, stream);
        row_pair_step<NP, kQuadBlocks>(x, y.quad(0, ib / kQuadBlocks), ib, acc);
    }
    switch (nb - ib) {
        case 1: row_pair_step<NP, 1>(x, y.quad(0, ib / kQuadBlocks), ib, acc); break;
        case 2:
            if constexpr (kTail2<Block>) {
                row_pair_tail2<NP>(x, y, ib, acc);
            } else {
                row_pair_step<NP, 2>(x, y.quad(0, ib / kQuadBlocks), ib, acc);
            }
            break;
        case 3: row_pair_step<NP, 3>(x, y.quad(0, ib / kQuadBlocks), ib, acc); break;
        default: break;
    }
    for (int p = 0; p < NP; ++p) {
        out[2 * p] = hsum_ps(_mm512_castps512_ps256(acc[p]));
        out[2 * p + 1] = hsum_ps(upper_half(acc[p]));
    }
}
