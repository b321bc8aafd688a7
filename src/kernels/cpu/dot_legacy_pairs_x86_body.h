// The AVX-512 pair tiles of the legacy block formats: two tokens (or, in
// the shared helpers, two rows) per 512-bit vector, each half doing the
// 256-bit arithmetic of dot_legacy_x86_body.h. Included after it, same
// namespace. On this CPU the byte dots share their two pipes with the
// float multiplies and FMAs, and shuffle-unit operations (inserts,
// permutes, in-lane shuffles alike) slow them down too once those pipes
// are busy: a step's weight unpack is therefore built from as few of them
// as a format allows (Q4_0 / Q4_1: step_groups), and scale products for
// both rows at once, which saved four multiplies a step for twelve in-lane
// shuffles, measured 10% slower. Rows too long for a tile's activations
// to stay in L1 go two tiles at a time, chunk by chunk
// (pair_rows_chunked); 8-token tiles on rows of 4k + 2 blocks (576 wide)
// by a loop that keeps the accumulators in registers through the two-block
// tail (pair_rows_tail2), which had cost more than a full step.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_legacy_pairs_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_LEGACY_X86)
#error "dot_legacy_pairs_x86_body.h: include kernels/cpu/dot_legacy_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_LEGACY_PAIRS_X86 1

// AVX-512: two tokens per 512-bit vector (lanes 0-7 the first, 8-15 the
// second), each half doing exactly quad_rows' 256-bit arithmetic, so results
// are unchanged. A 512-bit byte dot issues as fast as a 256-bit one here
// (measured), so this doubles the multiply-adds per instruction; the pair
// rows give both tokens' fields in one load, and the weight quads are
// unpacked into both halves once per step (load_weight_pair).
template <class Block>
struct PairRegs {
    __m512i q[4], base;
    __m512 d, s;
};

// Templates, like everything 512-bit here, so the AVX2 build never
// compiles them.
template <bool kOn = kVnni>
inline __m512i both_halves(__m256i v) {
    return _mm512_broadcast_i64x4(v);
}
template <bool kOn = kVnni>
inline __m512 both_halves(__m256 v) {
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(v)));
}
template <bool kOn = kVnni>
inline __m256 upper_half(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}
template <bool kOn = kVnni>
inline __m512i load512(const void* p) {
    return _mm512_loadu_si512(p);
}

// Both tokens' fields of a quad of a pair row (`quad` at its first half).
template <class Block>
inline PairRegs<Block> load_pair_regs(const uint8_t* quad) {
    using Q = ActQuadOf<Block>;
    PairRegs<Block> p;
    for (int j = 0; j < 4; ++j) p.q[j] = load512(quad_field(quad, offsetof(Q, qs) + kQuadField * j));
    if constexpr (kHasMin<Block>) {
        p.base = _mm512_setzero_si512();
        p.s = _mm512_loadu_ps(quad_field(quad, offsetof(Q, s)));
    } else if constexpr (std::is_same_v<Block, BlockQ4_0>) {
        p.base = load512(quad_field(quad, offsetof(Q, neg8)));
    } else if constexpr (std::is_same_v<Block, BlockQ5_0>) {
        const __m512i neg8 = load512(quad_field(quad, offsetof(Q, neg8)));
        p.base = _mm512_add_epi32(neg8, neg8);
    } else {
        p.base = load512(quad_field(quad, offsetof(Q, neg128)));
    }
    p.d = _mm512_loadu_ps(quad_field(quad, offsetof(Q, d)));
    return p;
}

// A row's WeightQuad in both halves of 512-bit vectors.
struct WeightPair {
    __m512i q[4];
    __m512 d, m;
};

// Four packed fp16 scales (a, b, c, d) -> (a a c c b b d d) in both halves.
template <bool kOn = kVnni>
inline __m512 pair_scales(uint64_t h4) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(h4)));
    const __m512i order = _mm512_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3, 0, 0, 2, 2, 1, 1, 3, 3);
    return _mm512_permutexvar_ps(order, _mm512_castps128_ps512(f));
}

// A step's four blocks in lane order a a c c b b d d (quad_scales' order).
inline constexpr int kQuadLaneBlock[8] = {0, 0, 2, 2, 1, 1, 3, 3};

// Words idx[0..8) of the 128 bytes at x, the second 64 masked by hi_mask.
// (Plain functions, not lambdas: a lambda loses the target pragma when the
// build has no -march=native.)
template <bool kOn = kVnni>
inline __m128i step_words(const void* x, __m512i idx, __mmask64 hi_mask) {
    const auto* p = static_cast<const uint8_t*>(x);
    return _mm512_castsi512_si128(
        _mm512_permutex2var_epi16(_mm512_loadu_si512(p), idx, _mm512_maskz_loadu_epi8(hi_mask, p + 64)));
}

// The fp16 field at byte kField of a full step's blocks: lane `lane`'s word
// in the step's bytes, whether one 64-byte load reaches them all and, if
// not, the mask of the second load. A step spans at least 72 bytes, so a
// 64-byte load at its start stays inside it; fields past byte 64 come from a
// second load masked to the step's end.
template <class Block, size_t kField>
struct StepField {
    static constexpr size_t kStep = kQuadBlocks * sizeof(Block);
    static_assert(kStep >= 64 && sizeof(Block) % 2 == 0 && kField % 2 == 0);
    static constexpr int word(int lane) {
        return static_cast<int>((kQuadLaneBlock[lane] * sizeof(Block) + kField) / 2);
    }
    static constexpr bool kOneLoad = (3 * sizeof(Block) + kField) / 2 < 32;
    static constexpr size_t kHiBytes = std::min<size_t>(64, kStep - 64);
    static constexpr __mmask64 kHiMask = kHiBytes == 64 ? ~__mmask64{0} : (__mmask64{1} << kHiBytes) - 1;
};

// The field of a full step of one row as floats in pair_scales' order, in
// both halves (the pair tiles): vector loads and a word permute where the
// scalar loads and shifts of pair_scales were a tenth of a step's
// instructions.
template <class Block, size_t kField>
inline __m512 step_scales_both(const Block* x) {
    using F = StepField<Block, kField>;
    const int w01 = F::word(0) | F::word(1) << 16, w23 = F::word(2) | F::word(3) << 16;
    const int w45 = F::word(4) | F::word(5) << 16, w67 = F::word(6) | F::word(7) << 16;
    if constexpr (F::kOneLoad) {
        const __m512i idx = _mm512_setr_epi32(w01, w23, w45, w67, w01, w23, w45, w67, 0, 0, 0, 0, 0, 0, 0, 0);
        return _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(idx, _mm512_loadu_si512(x))));
    } else {
        const __m512i idx = _mm512_setr_epi32(w01, w23, w45, w67, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        return _mm512_cvtph_ps(_mm256_broadcastsi128_si256(step_words(x, idx, F::kHiMask)));
    }
}

// The field of a full step of rows x0 and x1, as floats in the lane order
// of both rows' halves.
template <class Block, size_t kField>
inline __m512 row_pair_scales(const Block* x0, const Block* x1) {
    using F = StepField<Block, kField>;
    constexpr auto word = F::word;
    constexpr bool kOneLoad = F::kOneLoad;
    __m256i halves;
    if constexpr (kOneLoad) {  // both rows' fields from one two-source permute
        const __m512i idx = _mm512_setr_epi32(word(0) | word(1) << 16, word(2) | word(3) << 16,
                                              word(4) | word(5) << 16, word(6) | word(7) << 16,
                                              (32 + word(0)) | (32 + word(1)) << 16, (32 + word(2)) | (32 + word(3)) << 16,
                                              (32 + word(4)) | (32 + word(5)) << 16, (32 + word(6)) | (32 + word(7)) << 16,
                                              0, 0, 0, 0, 0, 0, 0, 0);
        halves = _mm512_castsi512_si256(_mm512_permutex2var_epi16(_mm512_loadu_si512(x0), idx, _mm512_loadu_si512(x1)));
    } else {
        constexpr __mmask64 kHiMask = F::kHiMask;
        const __m512i idx = _mm512_setr_epi32(word(0) | word(1) << 16, word(2) | word(3) << 16,
                                              word(4) | word(5) << 16, word(6) | word(7) << 16, 0, 0, 0, 0, 0, 0, 0,
                                              0, 0, 0, 0, 0);
        halves = _mm256_inserti128_si256(_mm256_castsi128_si256(step_words(x0, idx, kHiMask)),
                                         step_words(x1, idx, kHiMask), 1);
    }
    return _mm512_cvtph_ps(halves);
}

// add_fifth_bits at 512 bits: hv holds each 256-bit half's qh words laid out
// as there (a, c, 0, 0, b, d, 0, 0); the same byte shuffle works in every
// 128-bit lane and the bit tests go into a mask. Shared by the pair tiles
// (one row in both halves) and the row pairs (dot_nibble_decode_x86_body.h).
template <bool kOn = kVnni>
inline void add_fifth_bits_512(__m512i hv, __m512i (&q)[4]) {
    const __m512i bit = _mm512_set1_epi64(static_cast<int64_t>(0x8040201008040201));
    constexpr int64_t kOnes = 0x0101010101010101;
    for (int j = 0; j < 4; ++j) {
        const __m512i pick = _mm512_set4_epi64(kOnes * (4 + j), kOnes * j, kOnes * (4 + j), kOnes * j);
        const __mmask64 set = _mm512_test_epi8_mask(_mm512_shuffle_epi8(hv, pick), bit);
        q[j] = _mm512_mask_add_epi8(q[j], set, q[j], _mm512_set1_epi8(0x10));
    }
}

template <int NB, class Block>
inline void add_fifth_bits_pair(const Block* x, WeightPair& w) {
    uint32_t h[kQuadBlocks] = {};
    for (int k = 0; k < NB; ++k) std::memcpy(&h[k], x[k].qh, sizeof h[k]);
    add_fifth_bits_512(_mm512_broadcast_i64x4(_mm256_setr_epi32(static_cast<int>(h[0]), static_cast<int>(h[2]), 0, 0,
                                                                static_cast<int>(h[1]), static_cast<int>(h[3]), 0, 0)),
                       w.q);
}

// A full step's eight-byte groups of the qs (bytes kFrom..kFrom + 7 of
// each block: b07 and b8f of load_weight_pair) in the qword order (a, c,
// b, d) of both halves, by word permutes. Q4_0's 18-byte blocks put a
// step's groups within the 64 bytes from kFrom: one load and one permute.
// Q4_1's 80-byte steps take a two-source permute of the step's first and
// last 64 bytes. Either replaced four 16-byte inserts and a qword permute
// per pair of vectors (five shuffle-unit operations, which the byte dots
// wait on: kernel, 1536-wide rows, one thread: Q4_0 265 -> 300, Q4_1 226 ->
// 239 G MAC/s); Q5_0 measured the same, Q5_1 4% slower.
template <class Block>
inline constexpr bool kPermutedGroups = std::is_same_v<Block, BlockQ4_0> || std::is_same_v<Block, BlockQ4_1>;

template <class Block, int kFrom>
inline __m512i step_groups(const Block* x) {
    static_assert(offsetof(Block, qs) % 2 == 0 && sizeof(Block) % 2 == 0);
    constexpr int kStep = kQuadBlocks * sizeof(Block);
    constexpr bool kOneLoad = 3 * sizeof(Block) + offsetof(Block, qs) + 8 <= 64;
    constexpr int kLo = kOneLoad ? kFrom : 0, kHi = kStep - 64;  // the sources' first bytes
    // The word of group element pair i of block k: in the first source, or
    // 32 on in the second.
    constexpr auto word = [](int k, int i) {
        const int byte = static_cast<int>(offsetof(Block, qs) + kFrom + k * sizeof(Block)) + 2 * i;
        return byte - kLo < 64 ? (byte - kLo) / 2 : 32 + (byte - kHi) / 2;
    };
    constexpr auto pair = [word](int k, int i) { return word(k, i) | word(k, i + 1) << 16; };
    const __m512i idx = _mm512_setr_epi32(pair(0, 0), pair(0, 2), pair(2, 0), pair(2, 2), pair(1, 0), pair(1, 2),
                                          pair(3, 0), pair(3, 2), pair(0, 0), pair(0, 2), pair(2, 0), pair(2, 2),
                                          pair(1, 0), pair(1, 2), pair(3, 0), pair(3, 2));
    const auto* p = reinterpret_cast<const uint8_t*>(x);
    if constexpr (kOneLoad) {
        return _mm512_permutexvar_epi16(idx, load512(p + kFrom));
    } else {
        return _mm512_permutex2var_epi16(load512(p), idx, load512(p + kHi));
    }
}

// load_weight_quad straight into both halves: Q4_0's and Q4_1's groups by
// word permutes straight from the step's bytes (step_groups); the other
// formats' blocks are loaded side by side into 512-bit vectors and one
// qword permute per field picks its groups for both halves at once (an
// unpack and a broadcast per field before, when the weight side was about
// a third of a step's instructions).
template <int NB, class Block>
inline WeightPair load_weight_pair(const Block* x) {
    WeightPair w;
    // Vector scales where one load reaches a step's fields (Q4_0, Q4_1;
    // measured slower with Q8_0's two).
    constexpr bool kVectorScales = NB == kQuadBlocks && StepField<Block, offsetof(Block, d)>::kOneLoad;
    if constexpr (kVectorScales) {
        w.d = step_scales_both<Block, offsetof(Block, d)>(x);
    } else {
        uint64_t h = 0;
        for (int k = 0; k < NB; ++k) h |= uint64_t{x[k].d} << (16 * k);
        w.d = pair_scales(h);
    }
    if constexpr (kHasMin<Block> && kVectorScales) {
        w.m = step_scales_both<Block, offsetof(Block, m)>(x);
    } else if constexpr (kHasMin<Block>) {
        uint64_t hm = 0;
        for (int k = 0; k < NB; ++k) hm |= uint64_t{x[k].m} << (16 * k);
        w.m = pair_scales(hm);
    } else {
        w.m = w.d;  // unused
    }
    if constexpr (kNibbles<Block>) {
        // Qword 2k of z: bytes 0..7 of block k, 2k + 1: bytes 8..15 (the
        // (a, c, b, d) groups of load_weight_quad's b07 and b8f).
        __m512i b07, b8f;
        if constexpr (kPermutedGroups<Block> && NB == kQuadBlocks) {
            b07 = step_groups<Block, 0>(x);
            b8f = step_groups<Block, 8>(x);
        } else {
            __m512i z = _mm512_setzero_si512();
            if constexpr (NB > 0) z = _mm512_castsi128_si512(load128(x[0].qs));
            if constexpr (NB > 1) z = _mm512_inserti32x4(z, load128(x[1].qs), 1);
            if constexpr (NB > 2) z = _mm512_inserti32x4(z, load128(x[2].qs), 2);
            if constexpr (NB > 3) z = _mm512_inserti32x4(z, load128(x[3].qs), 3);
            b07 = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 4, 2, 6, 0, 4, 2, 6), z);
            b8f = _mm512_permutexvar_epi64(_mm512_setr_epi64(1, 5, 3, 7, 1, 5, 3, 7), z);
        }
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        w.q[0] = _mm512_and_si512(b07, m4);
        w.q[1] = _mm512_and_si512(b8f, m4);
        w.q[2] = _mm512_and_si512(_mm512_srli_epi16(b07, 4), m4);
        w.q[3] = _mm512_and_si512(_mm512_srli_epi16(b8f, 4), m4);
        if constexpr (kFifthBit<Block>) add_fifth_bits_pair<NB>(x, w);
    } else {
        // ab: qword j block a's group j, 4 + j block b's; cd likewise. A
        // missing block's bytes are 0x80 after the xor like load_weight_quad's.
        __m256i qs[kQuadBlocks];
        for (int k = 0; k < kQuadBlocks; ++k) qs[k] = k < NB ? load256(x[k].qs) : _mm256_setzero_si256();
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // w + 128, see ActQuad::neg128
        const __m512i ab = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(qs[0]), qs[1], 1), flip);
        const __m512i cd = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(qs[2]), qs[3], 1), flip);
        for (int j = 0; j < 4; ++j) {
            const __m512i pick = _mm512_setr_epi64(j, 8 + j, 4 + j, 12 + j, j, 8 + j, 4 + j, 12 + j);
            w.q[j] = _mm512_permutex2var_epi64(ab, pick, cd);
        }
    }
    return w;
}

// quad_fma for two tokens.
template <class Block>
inline void pair_fma(const WeightPair& w, const PairRegs<Block>& a, __m512& acc) {
    __m512i q = a.base;
    for (int j = 0; j < 4; ++j) q = _mm512_dpbusd_epi32(q, w.q[j], a.q[j]);
    if constexpr (kHasMin<Block>) acc = _mm512_fmadd_ps(w.m, a.s, acc);
    acc = _mm512_fmadd_ps(_mm512_mul_ps(w.d, a.d), _mm512_cvtepi32_ps(q), acc);
}

template <int NR, int NT, int NB, class Block>
inline void pair_step(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, int64_t ib,
                      __m512 (&acc)[NR][(NT + 1) / 2]) {
    WeightPair w[NR];
    for (int r = 0; r < NR; ++r) w[r] = load_weight_pair<NB>(x[r] + ib);
    const int64_t iq = ib / kQuadBlocks;
    for (int p = 0; p < NT / 2; ++p) {
        const PairRegs<Block> a = load_pair_regs<Block>(y.quad(2 * p, iq));
        for (int r = 0; r < NR; ++r) pair_fma<Block>(w[r], a, acc[r][p]);
    }
    if constexpr (NT % 2 == 1) {  // the odd token in the lower half alone
        const ActRegs a = load_act_regs<Block>(y.quad(NT - 1, iq));
        for (int r = 0; r < NR; ++r) {
            WeightQuad lo_w;
            for (int j = 0; j < 4; ++j) lo_w.q[j] = _mm512_castsi512_si256(w[r].q[j]);
            lo_w.d = _mm512_castps512_ps256(w[r].d);
            lo_w.m = _mm512_castps512_ps256(w[r].m);
            __m256 lo = _mm512_castps512_ps256(acc[r][NT / 2]);
            quad_fma<Block>(lo_w, a, lo);
            acc[r][NT / 2] = _mm512_zextps256_ps512(lo);
        }
    }
}

// Blocks x[0] (lanes 0-3) and x[1] (lanes 4-7) in the tail2 order, in both
// halves: vector u holds elements 8u..8u+7 and 16+8u..16+8u+7 of each.
template <class Block>
inline void load_tail2_weights(const Block* x, __m512i (&q)[2]) {
    if constexpr (kNibbles<Block>) {  // element i: low nibble of qs[i], 16 + i: its high one
        const __m512i v =
            both_halves(_mm256_inserti128_si256(_mm256_castsi128_si256(load128(x[0].qs)), load128(x[1].qs), 1));
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        q[0] = _mm512_unpacklo_epi64(lo, hi);
        q[1] = _mm512_unpackhi_epi64(lo, hi);
    } else {  // qwords u and 2 + u of each block's 32 bytes, + 128 as in load_weight_pair
        const __m512i ab = _mm512_inserti64x4(_mm512_castsi256_si512(load256(x[0].qs)), load256(x[1].qs), 1);
        const __m512i z = _mm512_xor_si512(ab, _mm512_set1_epi8(static_cast<char>(0x80)));
        q[0] = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 0, 2, 4, 6), z);
        q[1] = _mm512_permutexvar_epi64(_mm512_setr_epi64(1, 3, 5, 7, 1, 3, 5, 7), z);
    }
}

// A row's last two blocks (at ib) for an even token count: pair_step<2>'s
// lane sums from two byte dots instead of four. Lanes l and l + 2 of the
// dots hold the halves of lane l's sum (l = 0, 1 per 128 bits); one
// shuffle and a masked add put them together and zero lanes 2 and 3 (blocks
// c and d, absent), then the float steps are pair_fma's.
template <int NR, int NT, class Block>
inline void pair_tail2(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, int64_t ib,
                       __m512 (&acc)[NR][(NT + 1) / 2]) {
    static_assert(NT % 2 == 0);
    __m512i wq[NR][2];
    __m512 wd[NR], wm[NR];
    for (int r = 0; r < NR; ++r) {
        const Block* b = x[r] + ib;
        load_tail2_weights(b, wq[r]);
        wd[r] = pair_scales(uint64_t{b[0].d} | uint64_t{b[1].d} << 16);
        if constexpr (kHasMin<Block>) wm[r] = pair_scales(uint64_t{b[0].m} | uint64_t{b[1].m} << 16);
    }
    const int64_t iq = ib / kQuadBlocks;
    for (int p = 0; p < NT / 2; ++p) {
        const uint8_t* quad = y.quad(2 * p, iq);
        const uint8_t* tail = y.quad(2 * p, iq + 1);  // right after the row's last quad
        const PairRegs<Block> a = load_pair_regs<Block>(quad);
        const __m512i a0 = load512(quad_field(tail, 0)), a1 = load512(quad_field(tail, kQuadField));
        for (int r = 0; r < NR; ++r) {
            const __m512i q = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(a.base, wq[r][0], a0), wq[r][1], a1);
            const __m512i sum = _mm512_maskz_add_epi32(0x3333, q, _mm512_shuffle_epi32(q, _MM_PERM_BADC));
            if constexpr (kHasMin<Block>) acc[r][p] = _mm512_fmadd_ps(wm[r], a.s, acc[r][p]);
            acc[r][p] = _mm512_fmadd_ps(_mm512_mul_ps(wd[r], a.d), _mm512_cvtepi32_ps(sum), acc[r][p]);
        }
    }
}

// Steps of hsum_halves (plain functions: lambdas returning vectors lose the
// target pragma without -march=native). 128-bit lanes (0 + 1, 2 + 3) of a,
// then of b:
template <bool kOn = kVnni>
inline __m512 add_lanes(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}
// Within each 128-bit lane (0 + 2, 1 + 3) of a, then of b:
template <bool kOn = kVnni>
inline __m512 add_in_lanes(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}

// hsum_ps of both halves of eight vectors at once, each sum added up in
// hsum_ps's order (so equal to it bit for bit): half h of v[i] ends up in
// lane 4 * (2 * (i % 2) + h) + i / 2. Shuffles bring the same partial sums
// of different vectors into one vector, so each add does 16 lanes' work
// where hsum_ps does 4, 2 and 1 (a tile on 576-wide rows runs only 4.5
// steps, so its sums weigh). By value: an array parameter made GCC spill
// the accumulators.
template <bool kOn = kVnni>
inline __m512 hsum_halves(__m512 v0, __m512 v1, __m512 v2, __m512 v3, __m512 v4, __m512 v5, __m512 v6,
                          __m512 v7) {
    const __m512 y0 = add_in_lanes(add_lanes(v0, v1), add_lanes(v2, v3));
    const __m512 y1 = add_in_lanes(add_lanes(v4, v5), add_lanes(v6, v7));
    // 0 + 1 and 2 + 3 within each lane: of y0, then of y1.
    return _mm512_add_ps(_mm512_shuffle_ps(y0, y1, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(y0, y1, _MM_SHUFFLE(3, 1, 3, 1)));
}

// Rows 0 (and 1) of a token's outputs from the low lanes of `rows`.
template <int NR>
inline void store_rows(float* out, __m128 rows) {
    if constexpr (NR == 2) {
        _mm_storel_pi(reinterpret_cast<__m64*>(out), rows);
    } else {
        _mm_store_ss(out, rows);
    }
}

// The hsum_ps of each half of acc[r][p] (row r of tokens 2p and 2p + 1) to
// out[token * out_stride + r], all by one hsum_halves.
template <int NR, int NT>
inline void store_pair_sums(const __m512 (&acc)[NR][(NT + 1) / 2], float* out, size_t out_stride) {
    constexpr int kPairs = (NT + 1) / 2;
    static_assert(NR <= 2 && kPairs <= 4);
    const __m512 z = _mm512_setzero_ps();
    __m512 v[2][4];
    for (int r = 0; r < 2; ++r) {
        for (int p = 0; p < 4; ++p) v[r][p] = r < NR && p < kPairs ? acc[r][p] : z;
    }
    // Lanes 4g + r: row r of token g; 4g + 2 + r: row r of token 4 + g.
    const __m512 sums = hsum_halves(v[0][0], v[0][1], v[1][0], v[1][1], v[0][2], v[0][3], v[1][2], v[1][3]);
    const __m128 lane[4] = {_mm512_castps512_ps128(sums), _mm512_extractf32x4_ps(sums, 1),
                            _mm512_extractf32x4_ps(sums, 2), _mm512_extractf32x4_ps(sums, 3)};
    for (int g = 0; g < 4; ++g) {
        if (g < NT) store_rows<NR>(out + g * out_stride, lane[g]);
        if (4 + g < NT) store_rows<NR>(out + (4 + g) * out_stride, _mm_movehl_ps(lane[g], lane[g]));
    }
}

// Full steps [ib0, ib1) of a pair tile.
template <int NR, int NT, class Block>
inline void pair_steps(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, const char* pf, int64_t ib0,
                       int64_t ib1, __m512 (&acc)[NR][(NT + 1) / 2]) {
    for (int64_t ib = ib0; ib < ib1; ib += kQuadBlocks) {
        prefetch_step<NR, Block, kQuadBlocks>(pf, ib, false);
        pair_step<NR, NT, kQuadBlocks>(x, y, ib, acc);
    }
}

// A pair tile's last, partial step and its sums.
template <int NR, int NT, class Block>
inline void pair_finish(const Block* const (&x)[NR], const ActTokens<Block, NT>& y, int64_t nb,
                        __m512 (&acc)[NR][(NT + 1) / 2], float* out, size_t out_stride) {
    const int64_t ib = nb - nb % kQuadBlocks;
    switch (nb - ib) {
        case 1: pair_step<NR, NT, 1>(x, y, ib, acc); break;
        case 2:
            if constexpr (kTail2<Block> && NT % 2 == 0) {
                pair_tail2<NR, NT>(x, y, ib, acc);
            } else {
                pair_step<NR, NT, 2>(x, y, ib, acc);
            }
            break;
        case 3: pair_step<NR, NT, 3>(x, y, ib, acc); break;
        default: break;
    }
    store_pair_sums<NR, NT>(acc, out, out_stride);
}

// pair_rows on rows of 4k + 2 blocks, k >= 1 (the 135M's 576-wide rows: 18
// blocks), straight from the full steps to pair_tail2. The steps run as a
// do-while, which cannot run zero times: with pair_rows' for loop and
// switch, GCC kept the accumulators in memory from the loop's exit, and
// the tail read them back (kernel, 576-wide rows, one thread, CPU time:
// 220 -> 233-239 G multiply-adds/s; same steps in the same order, same bits).
// For full 8-token tiles only, as the prompt runs them: for every token
// count it pushed GCC past its inlining limits (load_weight_pair of the
// other formats' partial steps went out of line).
template <int NR, int NT, class Block>
void pair_rows_tail2(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
                     size_t out_stride) {
    const Block* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
    const ActTokens<Block, NT> y(act, stride);
    constexpr int kPairs = (NT + 1) / 2;
    __m512 acc[NR][kPairs];
    for (int r = 0; r < NR; ++r) {
        for (int p = 0; p < kPairs; ++p) acc[r][p] = _mm512_setzero_ps();
    }
    const char* pf = prefetch_start<NR>(w, w_stride);
    int64_t ib = 0;
    do {
        prefetch_step<NR, Block, kQuadBlocks>(pf, ib, false);
        pair_step<NR, NT, kQuadBlocks>(x, y, ib, acc);
        ib += kQuadBlocks;
    } while (ib < nb - 2);
    pair_tail2<NR, NT>(x, y, nb - 2, acc);  // = ib, which GCC made 6% slower
    store_pair_sums<NR, NT>(acc, out, out_stride);
}

template <int NR, int NT, class Block>
void pair_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
               size_t out_stride) {
    if constexpr (kTail2<Block> && NT == kMaxDotTokens) {
        if (nb % kQuadBlocks == 2 && nb > kQuadBlocks) {
            return pair_rows_tail2<NR, NT, Block>(nb, w, w_stride, act, stride, out, out_stride);
        }
    }
    const Block* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const Block*>(w + r * w_stride);
    const ActTokens<Block, NT> y(act, stride);
    constexpr int kPairs = (NT + 1) / 2;
    __m512 acc[NR][kPairs];
    for (int r = 0; r < NR; ++r) {
        for (int p = 0; p < kPairs; ++p) acc[r][p] = _mm512_setzero_ps();
    }
    pair_steps<NR, NT>(x, y, prefetch_start<NR>(w, w_stride), 0, nb - nb % kQuadBlocks, acc);
    pair_finish<NR, NT>(x, y, nb, acc, out, out_stride);
}

// Rows of at least this many blocks go through pair_rows_chunked: there a
// tile's eight tokens read at least 43 KB of prepared activations (56 bytes
// a block and token), most of the 48 KB L1. Chunking rows of 48 and 64
// blocks (1536 and 2048 wide: 21 and 29 KB) made them 3-8% slower.
inline constexpr int64_t kChunkedMinBlocks = 96;
// Blocks a chunk: 20 KB of activations for eight tokens, which every tile
// but the first reads from L1 (with the weights of a chunk of 16 rows,
// 13 KB). Q4_0 kernel on 2048 x 5632, one thread, CPU time, 64 rows a call:
// chunks of 16 blocks 234, 32 240, 44 248-255, 64 248, 88 243 G
// multiply-adds/s.
inline constexpr int64_t kChunkBlocks = 44;

// Pair tiles of rows 2t and 2t + 1 (t < n_tiles <= kMaxChunkedTiles) over
// the same tokens on long rows, taking turns chunk by chunk, so that all but
// the first read each chunk's activations from L1; one tile after the
// other, each read all of them from L2, which bound the 1.1B's 5632-wide
// rows. Q4_0 kernel on 2048 x 5632, one thread, CPU time: one tile after
// the other 172 G multiply-adds/s; two tiles (four rows a call) by chunks
// of 16 blocks 218-226; since the matmul hands this path up to 64 rows a
// call (wide_rows_dot), 32 tiles by chunks of 44 blocks 275 (8 tiles 255,
// 16 tiles 267). Each tile's accumulators wait in memory between its
// chunks; every lane takes the same steps in the same order as in
// pair_rows, so the bits are the same.
inline constexpr int kMaxChunkedTiles = 32;

// The full steps [ib0, ib1) of one tile of pair_rows_chunked, its
// accumulators read from and written back to `acc`. Out of line: inlined
// into the loop over tiles, GCC kept two of the eight accumulators in
// memory through the steps.
template <int NT, class Block>
[[gnu::noinline]] void pair_chunk(const Block* const (&x)[2], const ActTokens<Block, NT>& y, const char* pf,
                                  int64_t ib0, int64_t ib1, __m512 (&acc)[2][(NT + 1) / 2]) {
    __m512 a[2][(NT + 1) / 2];
    for (int r = 0; r < 2; ++r) {
        for (int p = 0; p < (NT + 1) / 2; ++p) a[r][p] = acc[r][p];
    }
    pair_steps<2, NT>(x, y, pf, ib0, ib1, a);
    for (int r = 0; r < 2; ++r) {
        for (int p = 0; p < (NT + 1) / 2; ++p) acc[r][p] = a[r][p];
    }
}

// pair_finish of one tile of pair_rows_chunked, out of line too: inlined
// into it, with its accumulators of up to kMaxChunkedTiles tiles on the
// stack, GCC's large-stack-frame limit kept tile helpers out of line
// elsewhere in this unit.
template <int NT, class Block>
[[gnu::noinline]] void pair_chunk_finish(const Block* const (&x)[2], const ActTokens<Block, NT>& y, int64_t nb,
                                         __m512 (&acc)[2][(NT + 1) / 2], float* out, size_t out_stride) {
    __m512 a[2][(NT + 1) / 2];
    for (int r = 0; r < 2; ++r) {
        for (int p = 0; p < (NT + 1) / 2; ++p) a[r][p] = acc[r][p];
    }
    pair_finish<2, NT>(x, y, nb, a, out, out_stride);
}

template <int NT, class Block>
[[gnu::noinline]] void pair_rows_chunked(int64_t nb, const uint8_t* w, size_t w_stride, int n_tiles, const uint8_t* act,
                       size_t stride, float* out, size_t out_stride) {
    constexpr int kPairs = (NT + 1) / 2;
    const Block* x[kMaxChunkedTiles][2];
    const char* pf[kMaxChunkedTiles];
    for (int t = 0; t < n_tiles; ++t) {
        for (int r = 0; r < 2; ++r) x[t][r] = reinterpret_cast<const Block*>(w + (2 * t + r) * w_stride);
        pf[t] = prefetch_start<2>(w + 2 * t * w_stride, w_stride);
    }
    const ActTokens<Block, NT> y(act, stride);
    __m512 acc[kMaxChunkedTiles][2][kPairs];
    for (int t = 0; t < n_tiles; ++t) {
        for (auto& row : acc[t]) {
            for (__m512& v : row) v = _mm512_setzero_ps();
        }
    }
    const int64_t full = nb - nb % kQuadBlocks;
    for (int64_t ib0 = 0; ib0 < full; ib0 += kChunkBlocks) {
        const int64_t ib1 = std::min(full, ib0 + kChunkBlocks);
        for (int t = 0; t < n_tiles; ++t) pair_chunk<NT>(x[t], y, pf[t], ib0, ib1, acc[t]);
    }
    for (int t = 0; t < n_tiles; ++t) pair_chunk_finish<NT>(x[t], y, nb, acc[t], out + 2 * t, out_stride);
}
