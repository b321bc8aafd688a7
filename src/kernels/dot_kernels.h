// Dispatch table for the dot-product kernels the matmul runs: one weight row
// against up to kMaxDotTokens activation rows at once, so a weight block is
// unpacked once per group of tokens. Picks AVX2 / AVX-512-VNNI code at run
// time from what the CPU supports, with the scalar reference as fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gguf/ggml_type.h"

namespace tessera {

// Avx512Amx is the VNNI level plus AMX-INT8 tiles for the matmul's prompt
// tiles (kernels/amx_tiles.h); every other kernel runs its VNNI code there.
enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512Vnni = 2, Avx512Amx = 3 };

inline constexpr int kMaxDotTokens = 8;
inline constexpr int kMaxDotRows = 4;

// The best level this CPU runs (AVX2 needs avx2+fma+f16c; the VNNI level also
// needs avx512f/bw/vl/vnni; the AMX level also amx-tile/amx-int8 and the
// kernel's leave to use the tile registers, asked for once per process),
// capped by the environment variable TESSERA_KERNELS (scalar, avx2,
// avx512vnni or avx512amx: for side-by-side runs of one binary). Worked out
// once, on the first call.
SimdLevel best_simd_level();
const char* simd_level_name(SimdLevel level);
// The level simd_level_name calls `name`, if any.
std::optional<SimdLevel> parse_simd_level(std::string_view name);

// out[j] = dot(w_row, act + j * act_stride) for j in [0, n_act), where the
// activation rows are already quantized to activation_type_for(weight type)
// and 1 <= n_act <= kMaxDotTokens. n is the row length in elements.
using MultiDotFn = void (*)(int64_t n, const void* w_row, const uint8_t* act, size_t act_stride,
                            int n_act, float* out);

// The kernel for `weight` at `level`, or at the best lower level that has one
// (the scalar reference always does). `level` must not exceed
// best_simd_level(). The weight type must satisfy is_supported_weight_type.
MultiDotFn find_multi_dot(GgmlType weight, SimdLevel level);

// out[t * out_stride + r] = dot(w + r * w_stride, act + t * act_stride) for
// r < n_rows <= RowsKernel::max_rows and t < n_act <= kMaxDotTokens: a register tile,
// so activation blocks are loaded once per row group. Bit-identical to the
// MultiDotFn of the same type and level (given the same activations),
// whatever the tile.
using RowsDotFn = void (*)(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act,
                           size_t act_stride, int n_act, float* out, size_t out_stride);

// How a tiled kernel wants its activation rows: as quantized rows of
// activation_type_for(weight); as ActQuad pair rows (kernels/act_quads.h)
// prepared from those rows once per matmul, when act_stride is
// act_quad_pairs_bytes(act, n), token t of a tile is half t % 2 of pair row
// t / 2, and `act` points at the pair row of the tile's first token, which
// must be even; or (F16 and BF16 weights) as those F16 / BF16 rows widened
// back to F32 once per matmul, act_stride n * 4 bytes.
enum class ActLayout { Quantized, Quads, Widened };

// Rows one call may take (a multiple of kMaxDotRows): more than kMaxDotRows
// where the kernel has a path that shares each activation chunk between
// more rows than fit one register tile (long rows, whose activations do not
// fit L1); it splits other calls into register tiles itself.
struct RowsKernel {
    RowsDotFn fn = nullptr;
    ActLayout layout = ActLayout::Quantized;
    int max_rows = kMaxDotRows;
};

// The tiled kernel for `weight` at `level`; fn is nullptr where that level
// has none (the matmul then calls the MultiDotFn row by row).
RowsKernel find_rows_dot(GgmlType weight, SimdLevel level);

}  // namespace tessera
