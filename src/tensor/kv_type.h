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

// Q8_0 blocks must not straddle heads (the kernels address one head's
// slice): it needs head_dim to be a multiple of 32. Error for the user if not.
Status check_kv_types(KvTypes types, int head_dim);

}  // namespace tessera
