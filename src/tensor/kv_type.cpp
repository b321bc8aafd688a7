// Names and checks of the KV cache storage types.
#include "tensor/kv_type.h"

#include <cctype>

namespace tessera {

bool is_kv_type(GgmlType t) {
    return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0;
}

std::optional<GgmlType> parse_kv_type(std::string_view name) {
    std::string lower(name);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0}) {
        if (lower == kv_type_name(t)) return t;
    }
    return std::nullopt;
}

std::string kv_type_name(GgmlType t) {
    std::string name = ggml_type_name(t);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return name;
}

Status check_kv_types(KvTypes types, int head_dim) {
    for (GgmlType t : {types.k, types.v}) {
        if (!is_kv_type(t)) return Status::error("KV cache type " + kv_type_name(t) + " is not supported");
        if (t == GgmlType::Q8_0 && head_dim % 32 != 0) {
            return Status::error("KV cache type q8_0 needs a head dimension that is a multiple of 32 (this model: " +
                                 std::to_string(head_dim) + ")");
        }
    }
    return Status();
}

}  // namespace tessera
