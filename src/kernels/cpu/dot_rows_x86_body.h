// Helpers of the register-tiled kernels (dot_legacy_x86_body.h): the weight
// prefetch stream and the switch from run-time tile shapes (up to kMaxDotRows weight
// rows x kMaxDotTokens activation rows per call) to compile-time ones.
// Included after dot_x86_body.h, inside the same namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_rows_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_X86)
#error "dot_rows_x86_body.h: include kernels/cpu/dot_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_ROWS_X86 1

// Several weight rows read side by side defeat the hardware prefetcher
// (measured: streaming 1.5x slower than one row at a time), so a tile
// prefetches the rows after it (contiguous in memory) as one linear stream,
// NR blocks' worth per block it consumes. The stream runs whole row groups
// and at least kPrefetchAheadBytes ahead: two groups of short rows were too
// close to hide the memory latency (135M Q4_0 decode +23% at ~10 KB).
inline constexpr size_t kPrefetchAheadBytes = 10 * 1024;

template <int NR>
inline const char* prefetch_start(const uint8_t* w, size_t w_stride) {
    const size_t group = NR * w_stride;
    const size_t groups = std::max<size_t>(2, (kPrefetchAheadBytes + group - 1) / std::max<size_t>(group, 1));
    return reinterpret_cast<const char*>(w + groups * group);
}

// Rows longer than this many elements each stream from memory on their own
// (one-token tiles take them two at a time, dot_legacy_tiles_x86_body.h).
inline constexpr int64_t kShortRowMaxElems = 48 * kQK;

// A tile of one token (decode) on long rows reads each weight byte once per
// matmul from a stream that dwarfs the caches. On AMD its prefetches are
// non-temporal, so the stream does not push out of the caches what they
// hold (each line a T0 stream pushes out of L2 is written into the victim
// L3 first): 1.1B Q4_0 decode (rows of 2048 and 5632) on Zen 5, six
// alternations twice: one thread +3% and +6% (every pair >= 1.00); two
// threads +7% (four). On an Intel Xeon (Sapphire Rapids class) the same
// hint ran the 1.1B decode at 0.4x of T0's speed (16 vs 40 t/s on two
// threads, three alternations), so other vendors keep T0
// (nta_weight_streams, dot_x86.h). On the 135M shapes' short rows (576 and
// 1536) the hint made one-thread Q4_0 decode bimodal on Zen 5, a third of
// the processes at 360-420 t/s against 440-447 with T0, so short rows keep
// T0, as do tiles of several tokens, which read their rows again for the
// next token tile. (On Zen 4 the one-token tiles read long rows one at a
// time with an L2 prefetch instead: dot_legacy_tiles_x86_body.h.)
inline bool long_row(int64_t row_elems) { return row_elems > kShortRowMaxElems; }

template <int NT>
inline bool stream_weights(int64_t row_elems) {
    return NT == 1 && long_row(row_elems) && nta_weight_streams();
}

template <int NR, class Block, int kStepBlocks>
inline void prefetch_step(const char* start, int64_t ib, bool stream) {
    const char* p = start + ib * NR * sizeof(Block);
    constexpr size_t kBytes = kStepBlocks * NR * sizeof(Block);
    if (stream) {
        for (size_t off = 0; off < kBytes; off += 64) _mm_prefetch(p + off, _MM_HINT_NTA);
    } else {
        for (size_t off = 0; off < kBytes; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
    }
}

// How a tile prefetches its weight rows: the stream above (Stream), not at
// all, leaving them to the hardware prefetcher (None), or one row's step
// kL2AheadBytes ahead into L2 (L2Ahead). The last two serve Zen 4's
// one-row decode tiles (dot_legacy_tiles_x86_body.h, dot_kquants_x86_body.h).
enum class RowPrefetch { Stream, None, L2Ahead };
inline constexpr size_t kL2AheadBytes = 16 * 1024;

// One step's prefetch in mode kMode: prefetch_step's stream from `start`,
// or the lines of row 0's step (`row0_step`, a single row) ahead into L2.
template <RowPrefetch kMode, int NR, class Block, int kStepBlocks>
inline void prefetch_rows_step(const char* start, int64_t ib, bool stream, const Block* row0_step) {
    if constexpr (kMode == RowPrefetch::Stream) {
        prefetch_step<NR, Block, kStepBlocks>(start, ib, stream);
    } else if constexpr (kMode == RowPrefetch::L2Ahead) {
        static_assert(NR == 1);
        const char* p = reinterpret_cast<const char*>(row0_step) + kL2AheadBytes;
        for (size_t off = 0; off < kStepBlocks * sizeof(Block); off += 64) _mm_prefetch(p + off, _MM_HINT_T1);
    }
}

template <template <int, int> class Tile, int NR>
void rows_dot_nr(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n_act, float* o,
                 size_t os) {
    switch (n_act) {
        case 1: Tile<NR, 1>::run(n, w, ws, a, as, o, os); return;
        case 2: Tile<NR, 2>::run(n, w, ws, a, as, o, os); return;
        case 3: Tile<NR, 3>::run(n, w, ws, a, as, o, os); return;
        case 4: Tile<NR, 4>::run(n, w, ws, a, as, o, os); return;
        case 5: Tile<NR, 5>::run(n, w, ws, a, as, o, os); return;
        case 6: Tile<NR, 6>::run(n, w, ws, a, as, o, os); return;
        case 7: Tile<NR, 7>::run(n, w, ws, a, as, o, os); return;
        default: Tile<NR, 8>::run(n, w, ws, a, as, o, os); return;
    }
}
static_assert(kMaxDotTokens == 8);

// Turns a rows x tokens tile template into a RowsDotFn.
template <template <int, int> class Tile>
void rows_dot(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act, size_t act_stride,
              int n_act, float* out, size_t out_stride) {
    switch (n_rows) {
        case 1: rows_dot_nr<Tile, 1>(n, w, w_stride, act, act_stride, n_act, out, out_stride); return;
        case 2: rows_dot_nr<Tile, 2>(n, w, w_stride, act, act_stride, n_act, out, out_stride); return;
        case 3: rows_dot_nr<Tile, 3>(n, w, w_stride, act, act_stride, n_act, out, out_stride); return;
        default: rows_dot_nr<Tile, 4>(n, w, w_stride, act, act_stride, n_act, out, out_stride); return;
    }
}
static_assert(kMaxDotRows == 4);
