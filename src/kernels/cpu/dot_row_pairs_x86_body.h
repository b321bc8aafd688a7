// One-token (decode) tiles on AVX-512 for the nibble formats (Q4_0, Q4_1,
// Q5_0, Q5_1): two weight rows per 512-bit vector,
// row 2p in lanes 0-7 and row 2p + 1 in lanes 8-15, against one token's
// activations broadcast to both halves. Each half does exactly quad_rows'
// 256-bit arithmetic for its row, so results are unchanged; but the weight
// unpacking, byte dots, converts and FMAs of two rows issue as one
// instruction each, and a step's block scales come from vector loads and one
// word permute instead of eight scalar loads. Decode of a model larger than
// the caches was bound by this instruction stream about as much as by memory.
// A 384 x 2048 matrix in L2, one thread, best single call: Q4_0 10.4 ->
// 8.3 us, Q4_1 12.3 -> 9.5, Q5_0 20.9 -> 15.3, Q5_1 22.7 -> 16.6. Q8_0 got
// slower (12.1 -> 14.2 us: its 32-byte blocks need more 16-byte inserts than
// the 256-bit path's joins save), so it stays on quad_rows.
// Included by dot_avx512.cpp only, after dot_quad_tiles_x86_body.h (which
// declares row_pair_rows), same namespace.

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
    const __m512i ab = join4(x0[0].qs, x0[1].qs, x1[0].qs, x1[1].qs);
    const __m512i cd = join4(x0[2].qs, x0[3].qs, x1[2].qs, x1[3].qs);
    const __m512i b07 = _mm512_unpacklo_epi64(ab, cd), b8f = _mm512_unpackhi_epi64(ab, cd);
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
        case 2: row_pair_step<NP, 2>(x, y.quad(0, ib / kQuadBlocks), ib, acc); break;
        case 3: row_pair_step<NP, 3>(x, y.quad(0, ib / kQuadBlocks), ib, acc); break;
        default: break;
    }
    for (int p = 0; p < NP; ++p) {
        out[2 * p] = hsum_ps(_mm512_castps512_ps256(acc[p]));
        out[2 * p + 1] = hsum_ps(upper_half(acc[p]));
    }
}
