// The element types a KV cache row may be stored in (F32, F16, BF16, Q8_0),
// their command-line names and row geometry. Rows are encoded with
// quantize_row and decoded with dequantize_row (quant.h), the scalar
// reference the attention kernels' in-register conversions are tested against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "gguf/ggml_type.h"

namespace tessera {

// Storage types of K and V; llama.cpp's -ctk/-ctv allow them to differ.
// F16 by default: half the attention bytes and KV memory of F32, and the
// golden test still passes (measured costs: docs/BENCHMARKS.md).
struct KvTypes {
    GgmlType k = GgmlType::F16;
    GgmlType v = GgmlType::F16;
};

bool is_kv_type(GgmlType t);

// "f32", "f16", "bf16", "q8_0" (any case); nullopt for anything else.
std::optional<GgmlType> parse_kv_type(std::string_view name);

// The lower-case name parse_kv_type accepts.
std::string kv_type_name(GgmlType t);

// Bytes of n elements of a KV type (n a multiple of 32 for Q8_0).
inline int64_t kv_row_bytes(GgmlType t, int64_t n) {
    switch (t) {
        case GgmlType::F32: return n * 4;
        case GgmlType::F16: case GgmlType::BF16: return n * 2;
        default: return n / 32 * 34;  // Q8_0: fp16 scale + 32 int8 per block
    }
}

// K is stored "keys in lanes": each KV block of block_size keys is the
// transpose of its block_size stored rows, unit by unit (a unit is one element
// of F32/F16/BF16, or a Q8_0 block's fp16 scale or one of its int8 values).
// The unit at byte x of key j's row lies at byte x * block_size + j * unit
// size of the block, so element d of a head (F32/F16/BF16) is block_size
// consecutive values, one per key, and a Q8_0 block is block_size scales
// then 32 runs of block_size int8. The attention kernels then score a vector
// of keys with broadcast-q FMAs and no horizontal sums. A block keeps its
// bytes (block_size * row bytes); a head's slice starts at its row offset
// times block_size. V stays row-major.

// Kernels read whole vectors of keys from a block even when fewer are valid:
// K pools must stay readable this many bytes past their end.
constexpr int64_t kKeysInLanesPadBytes = 64;

// Writes bytes [x0, x0 + n) of key `key`'s stored row (src, unit-aligned:
// x0 and n whole units) into its keys-in-lanes block.
void scatter_k_row(GgmlType t, const uint8_t* src, int64_t x0, int64_t n, int block_size, int key, uint8_t* block);

// The inverse: bytes [x0, x0 + n) of key `key`'s row, back in row layout.
void gather_k_row(GgmlType t, const uint8_t* block, int64_t x0, int64_t n, int block_size, int key, uint8_t* dst);

// Q8_0 blocks must not straddle heads (the kernels address one head's
// slice): it needs head_dim to be a multiple of 32. Error for the user if not.
Status check_kv_types(KvTypes types, int head_dim);

}  // namespace tessera
