// Register-tiled dot kernels for the legacy formats (Q4_0 and Q8_0 in
// dot_quads_x86_body.h, Q4_1 here) and the tile-shape dispatch: up
// to kMaxDotRows weight rows x kMaxDotTokens activation rows per call, so a
// weight block is unpacked once per token group and an activation block
// loaded once per row group. Each output keeps one accumulator that walks the
// blocks in order, so a result does not depend on the tile it was part of.
// Included after dot_x86_body.h, inside the same namespace.

// fp16 -> all lanes. movd zero-extends, so unlike _cvtsh_ss (a pinsrw into a
// live register) this carries no false dependency across loop iterations.
inline __m256 broadcast_f16(uint16_t h) { return _mm256_broadcastss_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }

// Several weight rows read side by side defeat the hardware prefetcher
// (measured: streaming 1.5x slower than one row at a time), so while a tile
// works on block ib it prefetches the row group after next (rows are
// contiguous in memory) linearly, NR blocks' worth per block of the step.
template <int NR, class Block, int kStepBlocks = 1>
inline void prefetch_next_group(const uint8_t* w, size_t w_stride, int64_t ib) {
    const char* p = reinterpret_cast<const char*>(w + 2 * NR * w_stride) + ib * NR * sizeof(Block);
    for (size_t off = 0; off < kStepBlocks * NR * sizeof(Block); off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

// Q4_1 x Q8_1: sum_b d_x d_y sum(q_x q_y) + m_x s_y; the m_x s_y terms of the
// rows accumulate in the lanes of one 128-bit vector per token.
template <int NR, int NT>
void q4_1_rows(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* act, size_t stride, float* out,
               size_t out_stride) {
    const BlockQ4_1* x[NR];
    for (int r = 0; r < NR; ++r) x[r] = reinterpret_cast<const BlockQ4_1*>(w + r * w_stride);
    const BlockQ8_1* y[NT];
    act_rows(act, stride, y);
    __m256 acc[NR][NT];
    __m128 summs[NT];
    for (int t = 0; t < NT; ++t) {
        summs[t] = _mm_setzero_ps();
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_setzero_ps();
    }
    for (int64_t ib = 0; ib < nb; ++ib) {
        __m256i u[NR];
        __m256 dx[NR];
        __m128 dm[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
        prefetch_next_group<NR, BlockQ4_1>(w, w_stride, ib);
        for (int r = 0; r < NR; ++r) {
            dm[r] = _mm_cvtph_ps(_mm_cvtsi32_si128(load_u32(&x[r][ib].d)));  // (d_x, m_x, 0, 0)
            dx[r] = _mm256_broadcastss_ps(dm[r]);
            u[r] = unpack_nibbles(x[r][ib].qs);
        }
        // (m_0, m_1, m_2, m_3) with shuffles only: a store + reload would stall.
        const __m128 mxv = _mm_movehl_ps(_mm_unpacklo_ps(dm[2], dm[3]), _mm_unpacklo_ps(dm[0], dm[1]));
        for (int t = 0; t < NT; ++t) {
            const __m128 ds = _mm_cvtph_ps(_mm_cvtsi32_si128(load_u32(&y[t][ib].d)));  // (d_y, s_y)
            const __m256 dy = _mm256_broadcastss_ps(ds);
            const __m256i yq = load256(y[t][ib].qs);
            for (int r = 0; r < NR; ++r) {
                const __m256i p = dot_u8s8(u[r], yq);
                acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(dx[r], dy), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
            summs[t] = _mm_fmadd_ps(mxv, _mm_permute_ps(ds, 0x55), summs[t]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        alignas(16) float extra[4];
        _mm_store_ps(extra, summs[t]);
        for (int r = 0; r < NR; ++r) out[t * out_stride + r] = hsum_ps(acc[r][t]) + extra[r];
    }
}

// Without AVX-512's 32 vector registers a 4x4 tile spills; AVX2 runs it as
// two 4x2 tiles (each output's arithmetic is unchanged).
template <template <int, int> class Tile, int NR, int NT>
void run_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
    if constexpr (!kVnni && NR * NT > 8) {
        Tile<NR, NT / 2>::run(n, w, ws, a, as, o, os);
        Tile<NR, NT - NT / 2>::run(n, w, ws, a + (NT / 2) * as, as, o + (NT / 2) * os, os);
    } else {
        Tile<NR, NT>::run(n, w, ws, a, as, o, os);
    }
}

template <template <int, int> class Tile, int NR>
void rows_dot_nr(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n_act, float* o,
                 size_t os) {
    switch (n_act) {
        case 1: run_tile<Tile, NR, 1>(n, w, ws, a, as, o, os); return;
        case 2: run_tile<Tile, NR, 2>(n, w, ws, a, as, o, os); return;
        case 3: run_tile<Tile, NR, 3>(n, w, ws, a, as, o, os); return;
        default: run_tile<Tile, NR, 4>(n, w, ws, a, as, o, os); return;
    }
}

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

// One weight row as a MultiDotFn (outputs of consecutive tokens are adjacent).
template <template <int, int> class Tile>
void one_row_dot(int64_t n, const void* w, const uint8_t* act, size_t stride, int n_act, float* out) {
    rows_dot<Tile>(n, static_cast<const uint8_t*>(w), 0, 1, act, stride, n_act, out, 1);
}

template <int NR, int NT>
struct Q4_1Rows {
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* o, size_t os) {
        q4_1_rows<NR, NT>(n / kQK, w, ws, a, as, o, os);
    }
};
