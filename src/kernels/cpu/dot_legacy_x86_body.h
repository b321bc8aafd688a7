// Tiled Q4_0, Q5_0, Q8_0, Q4_1 and Q5_1 kernels over activations prepared as
// ActQuads (kernels/act_quads.h). A step covers four blocks of a row: the
// weight bytes are arranged like ActQuad::qs (8 elements of each block per
// vector, blocks in lane pairs a a c c b b d d), so four chained byte dots
// leave two int32 lanes per block and a single convert, scale multiply and
// FMA follow, where a block at a time needed one each per block. Every output
// walks its row in the same steps whatever tile it is in, and the AVX2 and
// VNNI lane sums are equal integers, so results are bit-identical across
// tiles and levels. (A two-block last step, as on 576-wide rows, comes
// from the tail2 copy of it after the pair row's quads (act_quads.h): two
// byte dots instead of four, the same lane sums; quad_tail2 on AVX2,
// pair_tail2 in the AVX-512 pair tiles. On AVX2 that made the prompt tile
// on 576-wide rows about 4% faster, the one-token tiles the same.)
// Eight-block steps with one lane per block, which halve the converts,
// multiplies and FMAs, measured 4-18% slower in the 2 x 8 tile (16 weight
// registers a step, and a 576-wide row's last two blocks then cost a whole
// eight-block step), as did combining two four-block steps' lanes before
// one convert (8%).
// Included after dot_rows_x86_body.h and quad_qwords_x86_body.h, same
// namespace; the AVX-512 pair tiles follow in dot_legacy_pairs_x86_body.h,
// the tile dispatch in dot_legacy_tiles_x86_body.h.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_legacy_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_ROWS_X86)
#error "dot_legacy_x86_body.h: include kernels/cpu/dot_rows_x86_body.h first, same namespace"
#endif
#if !defined(TESSERA_BODY_QUAD_QWORDS_X86)
#error "dot_legacy_x86_body.h: include kernels/cpu/quad_qwords_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_LEGACY_X86 1

// Q4_1 and Q5_1: unsigned values plus a per-block minimum (Q8_1 activations).
template <class Block>
inline constexpr bool kHasMin = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>;
// Q5_0 and Q5_1: the nibbles plus a fifth bit per element in qh.
template <class Block>
inline constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>;
template <class Block>
inline constexpr bool kNibbles = !std::is_same_v<Block, BlockQ8_0>;
// The prepared activation layout a weight format reads (K-quants:
// dot_kquants_x86_body.h).
template <class Block>
inline constexpr bool kIsKQuant =
    std::is_same_v<Block, BlockQ4_K> || std::is_same_v<Block, BlockQ5_K> || std::is_same_v<Block, BlockQ6_K>;
template <class Block>
using ActQuadOf =
    std::conditional_t<kHasMin<Block>, ActQuadQ8_1, std::conditional_t<kIsKQuant<Block>, ActSuperQ8_K, ActQuad>>;

// A row's side of one step: bytes in ActQuad::qs order, and the four block
// scales (and Q4_1 / Q5_1 minimums) in the lane order a a c c b b d d.
struct WeightQuad {
    __m256i q[4];
    __m256 d, m;
};

// Four fp16 scales (or minimums) of blocks a, b, c, d -> (a a c c b b d d).
// They are put together in a general register in the order a c b d by
// shifts and ORs (the integer pipes have little else to do in these tiles)
// and widened in-lane by one unpack, so only one vector move, one unpack
// and one convert reach the vector pipes. On an AVX2-only Zen 3 this beat
// the word inserts from memory it replaced (`vpinsrw`, three a row and
// step) in the one-token tiles (L2-resident weights, the two builds
// alternated in one process, 60 pairs, best times): Q4_1 +18%, Q4_0 +6%,
// Q8_0 +3%, and those inserts had beaten a convert of (a b c d) and a
// cross-lane `vpermps` (Q4_1 15-20%, Q8_0 8%); a gather of the dwords was
// 25% slower still. The AVX-512 build shares it (its speed there unmeasured).
inline __m256 quad_scales(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
    const uint64_t acbd = uint64_t{a} | uint64_t{c} << 16 | uint64_t{b} << 32 | uint64_t{d} << 48;
    const __m128i v = _mm_cvtsi64_si128(static_cast<long long>(acbd));
    return _mm256_cvtph_ps(_mm_unpacklo_epi16(v, v));
}

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// [p | q] from two 16-byte halves; an absent one (past the row end) is zero.
inline __m256i join(const void* p, const void* q) {
    if (p == nullptr) return _mm256_setzero_si256();
    const __m256i lo = _mm256_zextsi128_si256(load128(p));
    return q != nullptr ? _mm256_inserti128_si256(lo, load128(q), 1) : lo;
}

// ORs 16 into every byte of w.q whose element has its qh bit set. Byte e of
// block k's 8-byte group in q[j] is element 8j + e, whose bit is bit e of
// qh[j]: a byte shuffle spreads qh[j] of a, c | b, d over those groups, and a
// per-byte bit mask picks bit e out of byte e.
template <int NB, class Block>
inline void add_fifth_bits(const Block* x, WeightQuad& w) {
    uint32_t h[kQuadBlocks] = {};  // a missing block's bits stay zero
    for (int k = 0; k < NB; ++k) std::memcpy(&h[k], x[k].qh, sizeof h[k]);
    const __m256i hv = _mm256_setr_epi32(static_cast<int>(h[0]), static_cast<int>(h[2]), 0, 0,
                                         static_cast<int>(h[1]), static_cast<int>(h[3]), 0, 0);
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));  // byte e: 1 << e
    constexpr int64_t kOnes = 0x0101010101010101;
    for (int j = 0; j < 4; ++j) {
        const __m256i pick = _mm256_setr_epi64x(kOnes * j, kOnes * (4 + j), kOnes * j, kOnes * (4 + j));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(hv, pick), bit), bit);
        w.q[j] = _mm256_or_si256(w.q[j], _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
    }
}

// Blocks x[0..NB) of a row, NB <= 4; missing blocks are zero bytes and zero
// scales (their activations are zero too, so they add exact zeros).
template <int NB, class Block>
inline WeightQuad load_weight_quad(const Block* x) {
    WeightQuad w;
    auto d = [&](int k) -> uint16_t { return k < NB ? x[k].d : 0; };
    w.d = quad_scales(d(0), d(1), d(2), d(3));
    if constexpr (kHasMin<Block>) {
        auto m = [&](int k) -> uint16_t { return k < NB ? x[k].m : 0; };
        w.m = quad_scales(m(0), m(1), m(2), m(3));
    }
    auto qs = [&](int k, int off) -> const void* { return k < NB ? x[k].qs + off : nullptr; };
    if constexpr (kNibbles<Block>) {
        // Bytes 0..7 of every block hold elements 0..7 (low nibbles) and
        // 16..23 (high), bytes 8..15 elements 8..15 and 24..31.
        const __m256i ab = join(qs(0, 0), qs(1, 0)), cd = join(qs(2, 0), qs(3, 0));
        const __m256i b07 = _mm256_unpacklo_epi64(ab, cd), b8f = _mm256_unpackhi_epi64(ab, cd);
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        w.q[0] = _mm256_and_si256(b07, m4);  // 0..15; Q4_0's -8 is in ActQuad::neg8
        w.q[1] = _mm256_and_si256(b8f, m4);
        w.q[2] = _mm256_and_si256(_mm256_srli_epi16(b07, 4), m4);
        w.q[3] = _mm256_and_si256(_mm256_srli_epi16(b8f, 4), m4);
        if constexpr (kFifthBit<Block>) add_fifth_bits<NB>(x, w);
    } else {
        if constexpr (NB == kQuadBlocks) {
            // Each block's 32 bytes in one load, then a 4 x 4 transpose of
            // qwords: q[j] = qword j of blocks a, c, b, d (four loads fewer
            // than the 16-byte joins below, the same bytes).
            quad_qwords(load256(x[0].qs), load256(x[1].qs), load256(x[2].qs), load256(x[3].qs), w.q);
        } else {
            for (int h16 = 0; h16 < 2; ++h16) {
                const __m256i ab = join(qs(0, 16 * h16), qs(1, 16 * h16)), cd = join(qs(2, 16 * h16), qs(3, 16 * h16));
                w.q[2 * h16] = _mm256_unpacklo_epi64(ab, cd);
                w.q[2 * h16 + 1] = _mm256_unpackhi_epi64(ab, cd);
            }
        }
        if constexpr (kVnni) {  // w + 128 as unsigned bytes; ActQuad::neg128 takes the 128 back out
            for (__m256i& v : w.q) v = _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80)));
        }
    }
    return w;
}

// One step's activations of a token, loaded once and used for every row.
struct ActRegs {
    __m256i q[4], base;
    __m256 d, s;
};

// Field `off` (a byte offset into ActQuad / ActQuadQ8_1) of a quad in a pair
// row: `quad` points at the token's half (pair + 32 * half) of that quad.
inline const uint8_t* quad_field(const uint8_t* quad, size_t off) { return quad + 2 * off; }

template <class Block>
inline ActRegs load_act_regs(const uint8_t* quad) {
    using Q = ActQuadOf<Block>;
    ActRegs r;
    for (int j = 0; j < 4; ++j) r.q[j] = load256(quad_field(quad, offsetof(Q, qs) + kQuadField * j));
    if constexpr (kHasMin<Block>) {  // unsigned weights: no offset
        r.base = _mm256_setzero_si256();
        r.s = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(quad, offsetof(Q, s))));
    } else if constexpr (std::is_same_v<Block, BlockQ4_0>) {
        r.base = load256(quad_field(quad, offsetof(Q, neg8)));
    } else if constexpr (std::is_same_v<Block, BlockQ5_0>) {  // -16 * sum(y) = 2 * neg8
        const __m256i neg8 = load256(quad_field(quad, offsetof(Q, neg8)));
        r.base = _mm256_add_epi32(neg8, neg8);
    } else {  // AVX2 multiplies signed bytes directly and needs no offset
        r.base = kVnni ? load256(quad_field(quad, offsetof(Q, neg128))) : _mm256_setzero_si256();
    }
    r.d = _mm256_loadu_ps(reinterpret_cast<const float*>(quad_field(quad, offsetof(Q, d))));
    return r;
}

// The prepared quads of NT tokens (act: pair rows, see dot_kernels.h):
// token t's half of quad iq is at tok[t] + iq * step.
template <class Block, int NT>
struct ActTokens {
    static constexpr size_t step = 2 * sizeof(ActQuadOf<Block>);
    const uint8_t* tok[NT];
    ActTokens(const uint8_t* act, size_t stride) {
        for (int t = 0; t < NT; ++t) tok[t] = act + static_cast<size_t>(t / 2) * stride + kQuadField * (t % 2);
    }
    const uint8_t* quad(int t, int64_t iq) const { return tok[t] + iq * step; }
};

// Exact int32 lane sums of w * y over the step (two lanes per block).
template <class Block>
inline __m256i quad_dot(const WeightQuad& w, const ActRegs& a) {
    if constexpr (kVnni) {
        __m256i acc = a.base;
        for (int j = 0; j < 4; ++j) acc = _mm256_dpbusd_epi32(acc, w.q[j], a.q[j]);
        return acc;
    } else if constexpr (kNibbles<Block>) {
        // u <= 31, |y| <= 128: four maddubs pair sums stay within
        // 4 * 2 * 31 * 128 = 31744 < 2^15, so the int16 adds are exact.
        __m256i s16 = _mm256_maddubs_epi16(w.q[0], a.q[0]);
        for (int j = 1; j < 4; ++j) s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w.q[j], a.q[j]));
        return _mm256_add_epi32(a.base, _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    } else {  // signed x signed through |w| and sign(y, w)
        __m256i acc = a.base;
        for (int j = 0; j < 4; ++j) {
            const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w.q[j], w.q[j]), _mm256_sign_epi8(a.q[j], w.q[j]));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
        }
        return acc;
    }
}

// acc += the four blocks' dot of one row and one token (for Q4_1 / Q5_1
// first the min terms m_x * s_y, one lane per block).
template <class Block>
inline void quad_fma(const WeightQuad& w, const ActRegs& a, __m256& acc) {
    const __m256i q = quad_dot<Block>(w, a);
    if constexpr (kHasMin<Block>) acc = _mm256_fmadd_ps(w.m, a.s, acc);
    acc = _mm256_fmadd_ps(_mm256_mul_ps(w.d, a.d), _mm256_cvtepi32_ps(q), acc);
}

// One step (blocks ib..ib+NB) of an NR x NT tile. With several tokens the
// rows' weight quads are unpacked into registers first and each token's
// activations loaded once for all NR rows (the load ports, not the ALUs,
// bound a wide tile); with one token the activations stay in registers and
// the rows stream past them.
template <int NR, int NT, int NB, class Block>
inline void quad_step(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, int64_t ib,
                      __m256 (&acc)[NR][NT]) {
    if constexpr (NT == 1) {
        const ActRegs a = load_act_regs<Block>(y.quad(0, ib / kQuadBlocks));
        for (int r = 0; r < NR; ++r) quad_fma<Block>(load_weight_quad<NB>(x[r] + ib), a, acc[r][0]);
    } else {
        WeightQuad wq[NR];
        for (int r = 0; r < NR; ++r) wq[r] = load_weight_quad<NB>(x[r] + ib);
        for (int t = 0; t < NT; ++t) {
            const ActRegs a = load_act_regs<Block>(y.quad(t, ib / kQuadBlocks));
            for (int r = 0; r < NR; ++r) quad_fma<Block>(wq[r], a, acc[r][t]);
        }
    }
}

// Formats whose tiles read a row's two-block tail from the tail2 fields
// (kernels/act_quads.h); Q5_0 and Q5_1 keep the quad for it.
template <class Block>
inline constexpr bool kTail2 = !kFifthBit<Block>;

// Blocks x[0] (lanes 0-3) and x[1] (lanes 4-7) in the tail2 order: vector u
// holds elements 8u..8u+7 and 16+8u..16+8u+7 of each.
template <class Block>
inline void load_tail2_quad(const Block* x, __m256i (&q)[2]) {
    if constexpr (kNibbles<Block>) {  // element i: low nibble of qs[i], 16 + i: its high one
        const __m256i v = join(x[0].qs, x[1].qs), m4 = _mm256_set1_epi8(0x0F);
        const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        q[0] = _mm256_unpacklo_epi64(lo, hi);
        q[1] = _mm256_unpackhi_epi64(lo, hi);
    } else {  // qwords u and 2 + u of each block's 32 bytes
        const __m256i a = _mm256_permute4x64_epi64(load256(x[0].qs), _MM_SHUFFLE(3, 1, 2, 0));
        const __m256i b = _mm256_permute4x64_epi64(load256(x[1].qs), _MM_SHUFFLE(3, 1, 2, 0));
        q[0] = _mm256_permute2x128_si256(a, b, 0x20);
        q[1] = _mm256_permute2x128_si256(a, b, 0x31);
    }
}

// A row's last two blocks (at ib) on AVX2: quad_step<2>'s lane sums from two
// byte dots of the tail2 fields instead of four of the quad, where half
// the bytes are zero. Lanes l and l + 2 of the dots hold the halves of lane
// l's sum (l = 0, 1 per 128 bits); one shuffle adds them. Lanes 2, 3, 6 and 7
// (blocks c and d, absent) are left holding copies, which the zero scales
// of those lanes turn into zero terms: the accumulators, never -0, do not
// change, so the bits are quad_step<2>'s.
template <int NR, int NT, class Block>
inline void quad_tail2(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, int64_t ib,
                       __m256 (&acc)[NR][NT]) {
    static_assert(!kVnni && kTail2<Block>);
    __m256 d[NR], m[NR];
    __m256i t2[NR][2];
    for (int r = 0; r < NR; ++r) {
        const Block* b = x[r] + ib;
        load_tail2_quad(b, t2[r]);
        d[r] = quad_scales(b[0].d, b[1].d, 0, 0);
        if constexpr (kHasMin<Block>) m[r] = quad_scales(b[0].m, b[1].m, 0, 0);
    }
    const int64_t iq = ib / kQuadBlocks;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int t = 0; t < NT; ++t) {
        const ActRegs a = load_act_regs<Block>(y.quad(t, iq));
        const uint8_t* tail = y.quad(t, iq + 1);  // right after the row's last quad
        const __m256i a0 = load256(quad_field(tail, 0)), a1 = load256(quad_field(tail, kQuadField));
        for (int r = 0; r < NR; ++r) {
            __m256i q;
            if constexpr (kNibbles<Block>) {
                // u <= 15, |y| <= 128: two maddubs pair sums stay within int16.
                const __m256i s16 =
                    _mm256_add_epi16(_mm256_maddubs_epi16(t2[r][0], a0), _mm256_maddubs_epi16(t2[r][1], a1));
                q = _mm256_madd_epi16(s16, ones);
            } else {
                auto dot = [&](__m256i w, __m256i v) {
                    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(v, w)), ones);
                };
                q = _mm256_add_epi32(dot(t2[r][0], a0), dot(t2[r][1], a1));
            }
            q = _mm256_add_epi32(a.base, _mm256_add_epi32(q, _mm256_shuffle_epi32(q, _MM_SHUFFLE(1, 0, 3, 2))));
            if constexpr (kHasMin<Block>) acc[r][t] = _mm256_fmadd_ps(m[r], a.s, acc[r][t]);
            acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(d[r], a.d), _mm256_cvtepi32_ps(q), acc[r][t]);
        }
    }
}

template <int NR, int NT, class Block, RowPrefetch kPrefetch = RowPrefetch::Stream>
void quad_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
               size_t out_stride) {
    const Block* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
    const ActTokens<Block, NT> y(act, stride);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    const bool stream = stream_weights<NT>(nb * kQK);
    int64_t ib = 0;
    for (; ib + kQuadBlocks <= nb; ib += kQuadBlocks) {
        prefetch_rows_step<kPrefetch, NR, Block, kQuadBlocks>(pf, ib, stream, x[0] + ib);
        quad_step<NR, NT, kQuadBlocks>(x, y, ib, acc);
    }
    switch (nb - ib) {
        case 1: quad_step<NR, NT, 1>(x, y, ib, acc); break;
        case 2:
            if constexpr (!kVnni && kTail2<Block>) {
                quad_tail2<NR, NT>(x, y, ib, acc);
            } else {
                quad_step<NR, NT, 2>(x, y, ib, acc);
            }
            break;
        case 3: quad_step<NR, NT, 3>(x, y, ib, acc); break;
        default: break;
    }
    for (int t = 0; t < NT; ++t) {
        for (int r = 0; r < NR; ++r) out[t * out_stride + r] = hsum_ps(acc[r][t]);
    }
}
