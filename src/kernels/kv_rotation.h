// Walsh-Hadamard rotation of attention vectors for a quantized KV cache.
//
// A Q8_0 block shares one scale among 32 values, so a single outlier channel
// (RoPE'd keys have several) costs the other 31 their precision. Rotating
// each head's q and k by the same orthonormal matrix H leaves every score
// q·k unchanged (Hq·Hk = q·k) and spreads an outlier over all the elements
// of its rotation block, so the stored values quantize with less error. V is
// stored rotated too: attention's output is then H times the true output,
// and H is its own inverse, so rotating the output again undoes it.
// llama.cpp does the same for its quantized K/V types; measured costs:
// docs/BENCHMARKS.md ("Quality: perplexity and KL divergence", KV types).
#pragma once

#include <cstdint>

#include "gguf/ggml_type.h"

namespace tessera {

// x[n] in consecutive blocks of `size` floats (a power of two dividing n),
// each replaced by H·block with H the orthonormal (scaled by 1/sqrt(size))
// Sylvester Hadamard matrix. Applying it twice gives x back, up to rounding.
void hadamard_blocks(float* x, int64_t n, int size);

// The rotation block size for K stored as `type` with heads of head_dim:
// 0 (no rotation) unless `type` is quantized (Q8_0) and head_dim a multiple
// of 64; then the largest power of two dividing head_dim, so an outlier
// spreads over as much of its head as possible.
int k_rotation_size(GgmlType type, int head_dim);

// The same for V: 64, the smallest block that still spreads over two Q8_0
// blocks. (llama.cpp measured the smallest rotation to suit V best.)
int v_rotation_size(GgmlType type, int head_dim);

}  // namespace tessera
