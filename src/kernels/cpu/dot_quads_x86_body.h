// Tiled Q4_0, Q8_0 and Q4_1 kernels over activations prepared as ActQuads
// (kernels/act_quads.h). A step covers four blocks of a row: two byte dots
// per block pair fill int32 lanes, one horizontal add packs the four blocks
// into one vector (a a c c b b d d), and a single convert, scale multiply and
// FMA follow, where a block at a time needed one each per block. Every
// output walks its row in the same steps whatever tile it is in, and the AVX2
// and VNNI lane sums are equal integers, so results are bit-identical across
// tiles and levels. Included after dot_rows_x86_body.h, same namespace.

template <class Block>
inline constexpr bool kIsQ4_1 = std::is_same_v<Block, BlockQ4_1>;
template <class Block>
inline constexpr bool kNibbles = !std::is_same_v<Block, BlockQ8_0>;
// The prepared activation layout a weight format reads.
template <class Block>
using ActQuadOf = std::conditional_t<kIsQ4_1<Block>, ActQuadQ8_1, ActQuad>;

// A row's side of one step: bytes in ActQuad's lane order, and the four block
// scales (and Q4_1 minimums) in the lane order after the horizontal add.
struct WeightQuad {
    __m256i lo[2], hi[2];
    __m256 d, m;
};

// Four packed fp16 scales (a, b, c, d) -> (a a c c b b d d).
inline __m256 quad_scales(uint64_t h4) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(h4)));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(f), _mm256_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3));
}

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// [p | q] from two 16-byte halves; q absent (past the row end) reads as zero.
inline __m256i join(const void* p, const void* q) {
    const __m256i lo = _mm256_zextsi128_si256(load128(p));
    return q != nullptr ? _mm256_inserti128_si256(lo, load128(q), 1) : lo;
}

// Blocks x[0..NB) of a row, NB <= 4; missing blocks are zero bytes and zero
// scales (their activations are zero too, so they add exact zeros).
template <int NB, class Block>
inline WeightQuad load_weight_quad(const Block* x) {
    WeightQuad q;
    uint64_t h = 0, hm = 0;
    for (int k = 0; k < NB; ++k) h |= uint64_t{x[k].d} << (16 * k);
    q.d = quad_scales(h);
    if constexpr (kIsQ4_1<Block>) {
        for (int k = 0; k < NB; ++k) hm |= uint64_t{x[k].m} << (16 * k);
        q.m = quad_scales(hm);
    }
    for (int p = 0; p < 2; ++p) {
        if (2 * p >= NB) {
            q.lo[p] = q.hi[p] = _mm256_setzero_si256();
            continue;
        }
        const Block* b = 2 * p + 1 < NB ? &x[2 * p + 1] : nullptr;
        if constexpr (kNibbles<Block>) {
            const __m256i raw = join(x[2 * p].qs, b ? b->qs : nullptr), m4 = _mm256_set1_epi8(0x0F);
            q.lo[p] = _mm256_and_si256(raw, m4);  // 0..15; Q4_0's -8 is in ActQuad::neg8
            q.hi[p] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
        } else {
            q.lo[p] = join(x[2 * p].qs, b ? b->qs : nullptr);
            q.hi[p] = join(x[2 * p].qs + 16, b ? b->qs + 16 : nullptr);
            if constexpr (kVnni) {  // w + 128 as unsigned bytes; ActQuad::neg128 takes the 128 back out
                q.lo[p] = _mm256_xor_si256(q.lo[p], _mm256_set1_epi8(static_cast<char>(0x80)));
                q.hi[p] = _mm256_xor_si256(q.hi[p], _mm256_set1_epi8(static_cast<char>(0x80)));
            }
        }
    }
    return q;
}

// One step's activations of a token, loaded once and used for every row.
struct ActRegs {
    __m256i lo[2], hi[2], base[2];
    __m256 d, s;
};

template <class Block>
inline ActRegs load_act_regs(const ActQuadOf<Block>& a) {
    ActRegs r;
    for (int p = 0; p < 2; ++p) {
        r.lo[p] = load256(a.lo[p]);
        r.hi[p] = load256(a.hi[p]);
        if constexpr (kIsQ4_1<Block>) {  // unsigned weights: no offset
            r.base[p] = _mm256_setzero_si256();
        } else if constexpr (std::is_same_v<Block, BlockQ4_0>) {
            r.base[p] = load256(a.neg8[p]);
        } else {  // AVX2 multiplies signed bytes directly and needs no offset
            r.base[p] = kVnni ? load256(a.neg128[p]) : _mm256_setzero_si256();
        }
    }
    r.d = _mm256_loadu_ps(a.d);
    if constexpr (kIsQ4_1<Block>) r.s = _mm256_loadu_ps(a.s);
    return r;
}

// Exact int32 lane sums of w * y over block pair p (see ActQuad).
template <class Block>
inline __m256i pair_dot(const WeightQuad& w, const ActRegs& a, int p) {
    if constexpr (kVnni) {
        return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(a.base[p], w.lo[p], a.lo[p]), w.hi[p], a.hi[p]);
    } else if constexpr (kNibbles<Block>) {  // u <= 15: two maddubs sums fit in int16
        const __m256i s16 =
            _mm256_add_epi16(_mm256_maddubs_epi16(w.lo[p], a.lo[p]), _mm256_maddubs_epi16(w.hi[p], a.hi[p]));
        return _mm256_add_epi32(a.base[p], _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    } else {  // signed x signed through |w| and sign(y, w)
        const __m256i ones = _mm256_set1_epi16(1);
        const __m256i lo = _mm256_maddubs_epi16(_mm256_sign_epi8(w.lo[p], w.lo[p]), _mm256_sign_epi8(a.lo[p], w.lo[p]));
        const __m256i hi = _mm256_maddubs_epi16(_mm256_sign_epi8(w.hi[p], w.hi[p]), _mm256_sign_epi8(a.hi[p], w.hi[p]));
        return _mm256_add_epi32(_mm256_madd_epi16(lo, ones), _mm256_madd_epi16(hi, ones));
    }
}

// acc += the four blocks' dot of one row and one token (for Q4_1 first the
// min terms m_x * s_y, one lane per block).
template <class Block>
inline void quad_fma(const WeightQuad& w, const ActRegs& a, __m256& acc) {
    const __m256i q = _mm256_hadd_epi32(pair_dot<Block>(w, a, 0), pair_dot<Block>(w, a, 1));
    if constexpr (kIsQ4_1<Block>) acc = _mm256_fmadd_ps(w.m, a.s, acc);
    acc = _mm256_fmadd_ps(_mm256_mul_ps(w.d, a.d), _mm256_cvtepi32_ps(q), acc);
}

// One step (blocks ib..ib+NB) of an NR x NT tile. With several tokens the
// rows' weight quads are unpacked into registers first and each token's
// activations loaded once for all NR rows (the load ports, not the ALUs,
// bound a wide tile); with one token the activations stay in registers and
// the rows stream past them.
template <int NR, int NT, int NB, class Block>
inline void quad_step(const Block* const (&x)[NR], const ActQuadOf<Block>* const (&y)[NT], int64_t ib,
                      __m256 (&acc)[NR][NT]) {
    if constexpr (NT == 1) {
        const ActRegs a = load_act_regs<Block>(y[0][ib / kQuadBlocks]);
        for (int r = 0; r < NR; ++r) quad_fma<Block>(load_weight_quad<NB>(x[r] + ib), a, acc[r][0]);
    } else {
        WeightQuad wq[NR];
        for (int r = 0; r < NR; ++r) wq[r] = load_weight_quad<NB>(x[r] + ib);
        for (int t = 0; t < NT; ++t) {
            const ActRegs a = load_act_regs<Block>(y[t][ib / kQuadBlocks]);
            for (int r = 0; r < NR; ++r) quad_fma<Block>(wq[r], a, acc[r][t]);
        }
    }
}

template <int NR, int NT, class Block>
void quad_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
               size_t out_stride) {
    const Block* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
    const ActQuadOf<Block>* y[NT];
    act_rows(act, stride, y);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    int64_t ib = 0;
    for (; ib + kQuadBlocks <= nb; ib += kQuadBlocks) {
        prefetch_next_group<NR, Block, kQuadBlocks>(w, w_stride, ib);
        quad_step<NR, NT, kQuadBlocks>(x, y, ib, acc);
    }
    switch (nb - ib) {
        case 1: quad_step<NR, NT, 1>(x, y, ib, acc); break;
        case 2: quad_step<NR, NT, 2>(x, y, ib, acc); break;
        case 3: quad_step<NR, NT, 3>(x, y, ib, acc); break;
        default: break;
    }
    for (int t = 0; t < NT; ++t) {
        for (int r = 0; r < NR; ++r) out[t * out_stride + r] = hsum_ps(acc[r][t]);
    }
}

// Splits a tile into shapes whose weight quads, one token's activations and
// accumulators fit the register file: with AVX-512's 32 registers 4 rows for
// one token (decode) or 2 rows x 4 tokens; with AVX2's 16, 1 row x 2 tokens.
template <int NR, int NT, class Block>
void quad_tile(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    constexpr int kRows = kVnni ? (NT == 1 ? 4 : 2) : 1, kToks = kVnni ? 4 : 2;
    if constexpr (NR > kRows) {
        quad_tile<kRows, NT, Block>(nb, w, ws, a, as, o, os);
        quad_tile<NR - kRows, NT, Block>(nb, w + kRows * ws, ws, a, as, o + kRows, os);
    } else if constexpr (NT > kToks) {
        quad_tile<NR, kToks, Block>(nb, w, ws, a, as, o, os);
        quad_tile<NR, NT - kToks, Block>(nb, w, ws, a + kToks * as, as, o + kToks * os, os);
    } else {
        quad_rows<NR, NT, Block>(nb, w, ws, a, as, o, os);
    }
}

template <int NR, int NT>
struct Q4_0Quads {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        quad_tile<NR, NT, BlockQ4_0>(n / kQK, w, ws, a, as, o, os);
    }
};
template <int NR, int NT>
struct Q8_0Quads {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        quad_tile<NR, NT, BlockQ8_0>(n / kQK, w, ws, a, as, o, os);
    }
};
template <int NR, int NT>
struct Q4_1Quads {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        quad_tile<NR, NT, BlockQ4_1>(n / kQK, w, ws, a, as, o, os);
    }
};

// One weight row against quantized activation rows (`act` format), for the
// MultiDotFn contract (tests and the reference checks; the matmul calls the
// tiled kernel on rows it prepared once). Allocates: off the hot path.
template <template <int, int> class Tile, GgmlType kAct>
void one_row_quads_dot(int64_t n, const void* w, const uint8_t* act, size_t stride, int n_act, float* out) {
    const size_t qb = act_quads_bytes(kAct, n);
    std::vector<uint8_t> quads(qb * static_cast<size_t>(n_act));
    for (int t = 0; t < n_act; ++t) {
        prepare_act_quads(kAct, n, act + static_cast<size_t>(t) * stride, quads.data() + t * qb);
    }
    rows_dot<Tile>(n, static_cast<const uint8_t*>(w), 0, 1, quads.data(), qb, n_act, out, 1);
}
