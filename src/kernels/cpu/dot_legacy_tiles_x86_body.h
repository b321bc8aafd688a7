// The register-tile dispatch of the legacy block formats: splits a rows x
// tokens tile into the shapes of dot_legacy_x86_body.h (256-bit) and
// dot_legacy_pairs_x86_body.h (AVX-512 pair tiles, row pairs), and names
// each format's tile for the dispatch tables. Included after both, same
// namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_legacy_tiles_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_LEGACY_PAIRS_X86)
#error "dot_legacy_tiles_x86_body.h: include kernels/cpu/dot_legacy_pairs_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_LEGACY_TILES_X86 1

// One token on AVX-512, two rows per vector: dot_nibble_decode_x86_body.h (in
// the AVX-512 build only).
template <int NP, class Block>
void row_pair_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, float* out);
// One token (decode): rows of at most this many blocks go four at a time,
// longer ones two at a time. Each long row is its own stream through memory,
// and four of them side by side kept the memory less busy than two (like the
// rows side by side prefetch_start is about). Measured with the weights
// streaming from memory, one thread, alternating binaries: the 1.1B model
// (rows of 64 and 176 blocks) decodes 5% faster two at a time (Q4_0 61.2 vs
// 58.3 t/s, row pairs; Q8_0 30.7 vs 29.0), while the 135M shapes (18 and 48
// blocks, a few KiB for four rows) decode 12% slower (Q4_0 389 vs 444 t/s).
// This also explains why row pairs, four long rows at a time, once lost to
// quad_rows there. Every path gives the same bits, so the switch is free.
inline constexpr int64_t kShortRowMaxBlocks = kShortRowMaxElems / kQK;

// NR rows x one token: on VNNI the nibble formats' row pairs
// (dot_nibble_decode_x86_body.h), Q8_0's rows side by side (its 32-byte blocks
// made row pairs slower); on AVX2 rows side by side.
//
// On Zen 4 (sequential_decode_rows), Q8_0's rows and every legacy format's
// long rows (the 1.1B's) are read one after another instead, each row one
// stream. There the hardware prefetcher keeps more of such a stream in
// flight than the T0 / NTA streams do. Short rows get no software prefetch
// at all; long ones each step's lines 16 KB ahead into L2 (RowPrefetch).
// Measured with processes alternated, against the tiles before:
// - 135M Q8_0 (short rows, no prefetch): one thread 131 vs 109 t/s (+20%,
//   4 of 4 rounds won); two threads 163 vs 134 (+22%, 3 of 4, one even).
//   The L2 prefetch there: 91-112 vs 129-167 t/s without.
// - 1.1B Q4_0 (rows of 64 and 176 blocks): with no prefetch one thread
//   29-31 vs 20-21 t/s, two threads 47-51 vs 37-38; the L2 prefetch then
//   won 4 of 4 rounds over none on each (one thread 33.3 vs 27.4 t/s, two
//   53.5 vs 46.5; 8 and 32 KB ahead alike).
// - 1.1B Q8_0 with the L2 prefetch: one thread 20-23 vs 16.5-18 t/s (3 of
//   3), two threads 26-28 vs 24-27 (3 of 3).
// The other arrangements were all slower:
// - long rows with the T0 / NTA stream kept (1.1B Q4_0: 26.5 t/s on one
//   thread);
// - four Q8_0 rows side by side without a prefetch (40-45 t/s);
// - the 135M Q4_0's short rows one at a time without one (166-190 vs
//   216-219 t/s with its row pairs; its 48-block rows the same way: even);
// - Q4_K's short one-token rows the same way (one thread 97-103 vs 124-129
//   t/s; its long rows gain: dot_kquants_x86_body.h).
// The sums are the same in every arrangement.
template <int NR, class Block>
void one_token_rows(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    const bool long_rows = long_row(nb * kQK);
    if (kVnni && (!kNibbles<Block> || long_rows) && sequential_decode_rows()) {
        for (int r = 0; r < NR; ++r) {
            if (long_rows) {
                quad_rows<1, 1, Block, RowPrefetch::L2Ahead>(nb, w + r * ws, ws, a, as, o + r, os);
            } else {
                quad_rows<1, 1, Block, RowPrefetch::None>(nb, w + r * ws, ws, a, as, o + r, os);
            }
        }
    } else if constexpr (kVnni && kNibbles<Block>) {
        row_pair_rows<NR / 2, Block>(nb, w, ws, a, o);
        if constexpr (NR % 2 == 1) quad_rows<1, 1, Block>(nb, w + (NR - 1) * ws, ws, a, as, o + NR - 1, os);
    } else {
        quad_rows<NR, 1, Block>(nb, w, ws, a, as, o, os);
    }
}

// Splits a tile into shapes whose weight quads, one token's activations and
// accumulators fit the register file: with AVX-512's 32 registers 4 rows for
// one token (decode; two for rows longer than kShortRowMaxBlocks) or 2 rows
// x 8 tokens (4 rows x 8 tokens of at least kChunkedMinBlocks: two such
// tiles taking turns by chunks of the row; for 8 tokens only, as the
// prompt runs them: instantiated for every token count it pushed GCC past
// its inlining limits, which left other tiles' helpers out of line, Q8_0
// pp512 4% slower); with AVX2's 16, 4 rows (two for long rows) for one
// token, the token's activations loaded once per step for all of them
// (Zen 3 without AVX-512, alternating binaries: 135M Q4_0 decode ~108 ->
// ~122 t/s, 1.1B 12.6 -> 14.5), and 1 row x 8 tokens: the row's weight
// quad is unpacked once for 8 tokens and some accumulators spill, which on
// an AVX2-only Zen 3 ran 1.5x faster than 1 x 2 (kernel_bench, Q4_0 / Q4_1 /
// Q8_0 prompt tasks; 1 x 4 was between).
template <int NR, int NT, class Block>
void quad_tile(int64_t nb, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    constexpr int kRows = NT == 1 ? 4 : (kVnni ? 2 : 1), kToks = 8;
    if constexpr (kVnni && NR == 2 * kRows && NT == kToks) {
        if (nb >= kChunkedMinBlocks) return pair_rows_chunked<NT, Block>(nb, w, ws, 2, a, as, o, os);
    }
    if constexpr (NR > kRows) {
        quad_tile<kRows, NT, Block>(nb, w, ws, a, as, o, os);
        quad_tile<NR - kRows, NT, Block>(nb, w + kRows * ws, ws, a, as, o + kRows, os);
    } else if constexpr (NT > kToks) {
        quad_tile<NR, kToks, Block>(nb, w, ws, a, as, o, os);
        static_assert(kToks % 2 == 0);  // a pair row holds two tokens
        quad_tile<NR, NT - kToks, Block>(nb, w, ws, a + kToks / 2 * as, as, o + kToks * os, os);
    } else if constexpr (kVnni && NT >= 2) {
        pair_rows<NR, NT, Block>(nb, w, ws, a, as, o, os);
    } else if constexpr (NT == 1 && NR >= 2) {
        if (nb <= kShortRowMaxBlocks) {
            one_token_rows<NR, Block>(nb, w, ws, a, as, o, os);
        } else {
            one_token_rows<2, Block>(nb, w, ws, a, as, o, os);
            if constexpr (NR > 2) quad_tile<NR - 2, 1, Block>(nb, w + 2 * ws, ws, a, as, o + 2, os);
        }
    } else {
        quad_rows<NR, NT, Block>(nb, w, ws, a, as, o, os);
    }
}

// Rows one call of the VNNI legacy-format kernels takes: full 8-token tiles
// of rows of at least kChunkedMinBlocks blocks share each activation chunk
// between all of them (pair_rows_chunked), not only a register tile's four;
// every other call goes through rows_dot four rows at a time, as before.
inline constexpr int kWideRows = 2 * kMaxChunkedTiles;
static_assert(kWideRows % kMaxDotRows == 0);

template <class Block, template <int, int> class Tile>
void wide_rows_dot(int64_t n, const uint8_t* w, size_t ws, int n_rows, const uint8_t* a, size_t as, int n_act,
                   float* o, size_t os) {
    if (n_act == kMaxDotTokens && n / kQK >= kChunkedMinBlocks && n_rows > kMaxDotRows) {
        const int paired = n_rows / 2 * 2;
        pair_rows_chunked<kMaxDotTokens, Block>(n / kQK, w, ws, paired / 2, a, as, o, os);
        w += paired * ws;
        o += paired;
        n_rows -= paired;
    }
    for (int r = 0; r < n_rows; r += kMaxDotRows) {
        rows_dot<Tile>(n, w + r * ws, ws, std::min(kMaxDotRows, n_rows - r), a, as, n_act, o + r, os);
    }
}

// The rows x tokens tile of one block type, as rows_dot takes it (n in
// elements); a name per format for the dispatch tables.
template <class Block, int NR, int NT>
struct BlockQuads {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        quad_tile<NR, NT, Block>(n / kQK, w, ws, a, as, o, os);
    }
};
template <int NR, int NT>
using Q4_0Quads = BlockQuads<BlockQ4_0, NR, NT>;
template <int NR, int NT>
using Q4_1Quads = BlockQuads<BlockQ4_1, NR, NT>;
template <int NR, int NT>
using Q5_0Quads = BlockQuads<BlockQ5_0, NR, NT>;
template <int NR, int NT>
using Q5_1Quads = BlockQuads<BlockQ5_1, NR, NT>;
template <int NR, int NT>
using Q8_0Quads = BlockQuads<BlockQ8_0, NR, NT>;

// One weight row against quantized activation rows (`act` format), for the
// MultiDotFn contract (tests and the reference checks; the matmul calls the
// tiled kernel on rows it prepared once). Allocates: off the hot path.
template <template <int, int> class Tile, GgmlType kAct>
void one_row_quads_dot(int64_t n, const void* w, const uint8_t* act, size_t stride, int n_act, float* out) {
    const size_t qb = act_quad_pairs_bytes(kAct, n);
    std::vector<uint8_t> quads(qb * static_cast<size_t>((n_act + 1) / 2));
    for (int t = 0; t < n_act; ++t) {
        prepare_act_quads(kAct, n, act + static_cast<size_t>(t) * stride, t % 2, quads.data() + t / 2 * qb,
                          SimdLevel::Scalar);
    }
    rows_dot<Tile>(n, static_cast<const uint8_t*>(w), 0, 1, quads.data(), qb, n_act, out, 1);
}
