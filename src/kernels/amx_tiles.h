// AMX-INT8 prompt tiles for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q4_K weights:
// 16 tokens x 16 weight rows a tile, whose integer dots the tile unit computes, with the
// same bits as the VNNI kernels (kernels/dot_kernels.h).
//
// The legacy formats' sum order needs each block's dot as two int32 half
// sums (elements 8j + 4h + e, h = 0, 1, j, e < 4), each scaled and added by
// one FMA into its own float lane. So one tile multiply takes K = 16 bytes
// (one half block of 16 tokens against one of 16 rows), and the float side
// runs lane by lane: a lane's chain over blocks b = c, c + 4, ... for every
// (token, row) of the tile sits in 16 vectors, one per token, so the eight
// lanes need no more registers than one. Q4_K's order has one lane per
// 32-element sub-block (dot_kquants_x86_body.h), so its multiplies take
// K = 32: a sub-block of 16 tokens against one of 16 rows. Activations are
// re-laid out once per matmul (prepare_amx_act_row: each block's halves
// contiguous, the block floats of 16 tokens side by side); weights are
// unpacked per 16-row tile into a scratch buffer of the tile unit's layout
// (four bytes of each of the 16 rows per 64-byte row).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"
#include "kernels/dot_kernels.h"

namespace tessera {

inline constexpr int kAmxTileTokens = 16;
inline constexpr int kAmxTileRows = 16;

// out[t * out_stride + r] = dot(w + r * w_stride, token t's activations) for
// r < n_rows <= kAmxTileRows and t < n_tok, n_tok a multiple of
// kAmxTileTokens; act holds n_tok rows of amx_act_row_bytes at act_stride,
// scales their amx_scale_floats per 16-token group, one group after the
// other; scratch holds amx_weight_scratch_bytes(weight, n) bytes
// (64-aligned).
using AmxTilesFn = void (*)(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act,
                            size_t act_stride, const float* scales, int64_t n_tok, float* out, size_t out_stride,
                            uint8_t* scratch);

// The tiles for `weight` at `level`; nullptr below SimdLevel::Avx512Amx and
// for the formats it has none for.
AmxTilesFn find_amx_tiles(GgmlType weight, SimdLevel level);

// The fewest tokens a call gives the tiles of `weight` (matmul leaves calls
// with fewer to the VNNI tiles): a 16-row tile's weights are unpacked once a
// call, and with one 16-token group over them the legacy formats' tiles ran
// at 0.8-0.9x the VNNI tiles (bench/matmul_level_ab, docs/benchmarks/HISTORY.md);
// Q4_K's, with twice the multiply-adds a tile multiply, at 1.2x.
int amx_min_tokens(GgmlType weight);

// The activations the tiles read, from a Q8_0, Q8_1 or Q8_K row (`act`):
// per row its int8 values (Q8_0 / Q8_1: each block's half 0, then half 1;
// Q8_K: as they are), and per 16-token group its block floats with the
// group's 16 tokens side by side, so a tile broadcasts each from one base:
// for each block the tokens' d, then (Q8_1) their d * sum, or (Q8_K) d *
// (sum of sub-block L) for L < 8. prepare_amx_act_row writes the row and
// token `slot` of the group's floats.
size_t amx_act_row_bytes(GgmlType act, int64_t n);
size_t amx_scale_floats(GgmlType act, int64_t n);
void prepare_amx_act_row(GgmlType act, const uint8_t* q_row, int64_t n, uint8_t* out, float* group_scales, int slot);

// A thread's scratch for one 16-row tile of `weight` rows of n elements.
size_t amx_weight_scratch_bytes(GgmlType weight, int64_t n);

}  // namespace tessera
