// Walks a GGUF buffer: header, metadata, tensor infos, then places tensors in
// the aligned data section. Every count is checked against the bytes left
// before anything is reserved, so a hostile count cannot force a huge
// allocation, and every size computation is checked for overflow.
#include "gguf/gguf_parser.h"

#include <bit>
#include <cstring>
#include <limits>

namespace tessera {
namespace {

constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 4;
constexpr uint64_t kMaxAlignment = 1u << 20;

// Smallest encoding of one value of each type, used to bound counts.
size_t min_encoded_size(GgufValueType type) {
    switch (type) {
        case GgufValueType::UINT8:
        case GgufValueType::INT8:
        case GgufValueType::BOOL: return 1;
        case GgufValueType::UINT16:
        case GgufValueType::INT16: return 2;
        case GgufValueType::UINT32:
        case GgufValueType::INT32:
        case GgufValueType::FLOAT32: return 4;
        case GgufValueType::UINT64:
        case GgufValueType::INT64:
        case GgufValueType::FLOAT64:
        case GgufValueType::STRING: return 8;
        case GgufValueType::ARRAY: return 12;
    }
    return 0;
}

bool known_value_type(uint32_t raw) { return raw <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

}  // namespace

Status GgufParser::read_bytes(void* dst, size_t n, const char* what) {
    if (n > remaining()) {
        return Status::error(std::string("file truncated while reading ") + what + " at offset " +
                             std::to_string(pos_));
    }
    std::memcpy(dst, data_ + pos_, n);
    pos_ += n;
    return Status();
}

Status GgufParser::read_string_view(std::string_view& out, const char* what) {
    uint64_t len = 0;
    TS_RETURN_IF_ERROR(read_scalar(len, what));
    if (len > remaining()) {
        return Status::error(std::string(what) + " at offset " + std::to_string(pos_) + " claims " +
                             std::to_string(len) + " bytes but only " + std::to_string(remaining()) +
                             " remain");
    }
    out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return Status();
}

Status GgufParser::read_string(std::string& out, const char* what) {
    std::string_view view;
    TS_RETURN_IF_ERROR(read_string_view(view, what));
    out.assign(view);
    return Status();
}

Status GgufParser::read_value(GgufValueType type, GgufValue& out, int depth) {
    out.type = type;
    switch (type) {
        case GgufValueType::UINT8: { uint8_t v; TS_RETURN_IF_ERROR(read_scalar(v, "uint8")); out.u = v; break; }
        case GgufValueType::INT8: { int8_t v; TS_RETURN_IF_ERROR(read_scalar(v, "int8")); out.i = v; break; }
        case GgufValueType::UINT16: { uint16_t v; TS_RETURN_IF_ERROR(read_scalar(v, "uint16")); out.u = v; break; }
        case GgufValueType::INT16: { int16_t v; TS_RETURN_IF_ERROR(read_scalar(v, "int16")); out.i = v; break; }
        case GgufValueType::UINT32: { uint32_t v; TS_RETURN_IF_ERROR(read_scalar(v, "uint32")); out.u = v; break; }
        case GgufValueType::INT32: { int32_t v; TS_RETURN_IF_ERROR(read_scalar(v, "int32")); out.i = v; break; }
        case GgufValueType::UINT64: { uint64_t v; TS_RETURN_IF_ERROR(read_scalar(v, "uint64")); out.u = v; break; }
        case GgufValueType::INT64: { int64_t v; TS_RETURN_IF_ERROR(read_scalar(v, "int64")); out.i = v; break; }
        case GgufValueType::FLOAT32: { float v; TS_RETURN_IF_ERROR(read_scalar(v, "float32")); out.f = v; break; }
        case GgufValueType::FLOAT64: { double v; TS_RETURN_IF_ERROR(read_scalar(v, "float64")); out.f = v; break; }
        case GgufValueType::BOOL: {
            uint8_t v;
            TS_RETURN_IF_ERROR(read_scalar(v, "bool"));
            if (v > 1) return Status::error("invalid bool value " + std::to_string(v) + " at offset " + std::to_string(pos_ - 1));
            out.u = v;
            break;
        }
        case GgufValueType::STRING: return read_string(out.str, "string value");
        case GgufValueType::ARRAY: return read_array(out, depth + 1);
    }
    return Status();
}

Status GgufParser::read_array(GgufValue& out, int depth) {
    if (depth > kMaxArrayDepth) return Status::error("arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    uint32_t raw_type = 0;
    uint64_t count = 0;
    TS_RETURN_IF_ERROR(read_scalar(raw_type, "array element type"));
    if (!known_value_type(raw_type)) {
        return Status::error("unknown array element type " + std::to_string(raw_type));
    }
    TS_RETURN_IF_ERROR(read_scalar(count, "array length"));
    out.array_type = static_cast<GgufValueType>(raw_type);
    uint64_t min_bytes = 0;
    if (mul_overflows(count, min_encoded_size(out.array_type), min_bytes) || min_bytes > remaining()) {
        return Status::error("array of " + std::to_string(count) + " elements at offset " +
                             std::to_string(pos_) + " is larger than the file");
    }
    const auto n = static_cast<size_t>(count);
    switch (out.array_type) {
        case GgufValueType::STRING:
            out.strings.resize(n);
            for (std::string_view& e : out.strings) TS_RETURN_IF_ERROR(read_string_view(e, "string array element"));
            break;
        case GgufValueType::ARRAY:
            out.arrays.resize(n);
            for (GgufValue& e : out.arrays) TS_RETURN_IF_ERROR(read_value(GgufValueType::ARRAY, e, depth));
            break;
        default: {
            out.scalars.resize(n);
            // Each element widened as read_value widens a scalar, then kept as
            // the bits of the field it went into.
            const GgufValueType t = out.array_type;
            const bool is_signed = t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
                                   t == GgufValueType::INT64;
            GgufValue e;
            for (uint64_t& bits : out.scalars) {
                TS_RETURN_IF_ERROR(read_value(t, e, depth));
                bits = e.is_float() ? std::bit_cast<uint64_t>(e.f) : is_signed ? static_cast<uint64_t>(e.i) : e.u;
            }
        }
    }
    return Status();
}

Status GgufParser::read_header(GgufFile& file, uint64_t& n_tensors, uint64_t& n_kv) {
    char magic[4];
    TS_RETURN_IF_ERROR(read_bytes(magic, 4, "magic"));
    if (std::memcmp(magic, "GGUF", 4) != 0) return Status::error("not a GGUF file (bad magic)");
    TS_RETURN_IF_ERROR(read_scalar(file.version_, "version"));
    if (file.version_ != 2 && file.version_ != 3) {
        return Status::error("unsupported GGUF version " + std::to_string(file.version_) +
                             " (supported: 2, 3; big-endian files are not supported)");
    }
    TS_RETURN_IF_ERROR(read_scalar(n_tensors, "tensor count"));
    TS_RETURN_IF_ERROR(read_scalar(n_kv, "metadata count"));
    return Status();
}

Status GgufParser::read_metadata(GgufFile& file, uint64_t n_kv) {
    constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
    if (n_kv > remaining() / kMinKvBytes) {
        return Status::error("metadata count " + std::to_string(n_kv) + " is larger than the file allows");
    }
    file.kv_.reserve(static_cast<size_t>(n_kv));
    for (uint64_t k = 0; k < n_kv; ++k) {
        std::string key;
        TS_RETURN_IF_ERROR(read_string(key, "metadata key"));
        if (key.empty()) return Status::error("empty metadata key (entry " + std::to_string(k) + ")");
        uint32_t raw_type = 0;
        TS_RETURN_IF_ERROR(read_scalar(raw_type, "metadata value type"));
        if (!known_value_type(raw_type)) {
            return Status::error("metadata key '" + key + "' has unknown value type " + std::to_string(raw_type));
        }
        GgufValue value;
        Status st = read_value(static_cast<GgufValueType>(raw_type), value, 0);
        if (!st.ok()) return Status::error("metadata key '" + key + "': " + st.message());
        if (file.kv_index_.count(key)) return Status::error("duplicate metadata key '" + key + "'");
        file.kv_index_.emplace(key, file.kv_.size());
        file.kv_.emplace_back(std::move(key), std::move(value));
    }
    return Status();
}

Status GgufParser::read_alignment(GgufFile& file) {
    const GgufValue* v = file.find("general.alignment");
    if (!v) return Status();
    if (v->type != GgufValueType::UINT32) {
        return Status::error(std::string("general.alignment has type ") + gguf_value_type_name(v->type) +
                             ", expected uint32");
    }
    if (v->u == 0 || (v->u & (v->u - 1)) != 0 || v->u > kMaxAlignment) {
        return Status::error("general.alignment " + std::to_string(v->u) + " is not a power of two up to 1 MiB");
    }
    file.alignment_ = v->u;
    return Status();
}

Status GgufParser::read_tensor_infos(GgufFile& file, uint64_t n_tensors) {
    constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
    if (n_tensors > remaining() / kMinTensorInfoBytes) {
        return Status::error("tensor count " + std::to_string(n_tensors) + " is larger than the file allows");
    }
    file.tensors_.reserve(static_cast<size_t>(n_tensors));
    for (uint64_t t = 0; t < n_tensors; ++t) {
        GgufTensorInfo info;
        TS_RETURN_IF_ERROR(read_string(info.name, "tensor name"));
        const std::string where = "tensor '" + info.name + "': ";
        TS_RETURN_IF_ERROR(read_scalar(info.n_dims, "tensor dimension count"));
        if (info.n_dims == 0 || info.n_dims > kMaxDims) {
            return Status::error(where + "has " + std::to_string(info.n_dims) + " dimensions (1 to 4 allowed)");
        }
        uint64_t n_elements = 1;
        for (uint32_t d = 0; d < info.n_dims; ++d) {
            uint64_t ne = 0;
            TS_RETURN_IF_ERROR(read_scalar(ne, "tensor dimension"));
            if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                return Status::error(where + "dimension " + std::to_string(d) + " is " + std::to_string(ne));
            }
            if (mul_overflows(n_elements, ne, n_elements) ||
                n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                return Status::error(where + "element count overflows");
            }
            info.ne[d] = static_cast<int64_t>(ne);
        }
        uint32_t raw_type = 0;
        TS_RETURN_IF_ERROR(read_scalar(raw_type, "tensor type"));
        auto type_info = ggml_type_info(raw_type);
        if (!type_info) return Status::error(where + "unknown tensor type " + std::to_string(raw_type));
        info.type = static_cast<GgmlType>(raw_type);
        if (info.ne[0] % type_info->block_size != 0) {
            return Status::error(where + "row length " + std::to_string(info.ne[0]) +
                                 " is not a multiple of the " + type_info->name + " block size " +
                                 std::to_string(type_info->block_size));
        }
        uint64_t n_bytes = 0;
        if (mul_overflows(n_elements / type_info->block_size, type_info->block_bytes, n_bytes)) {
            return Status::error(where + "byte size overflows");
        }
        info.n_bytes = static_cast<size_t>(n_bytes);
        TS_RETURN_IF_ERROR(read_scalar(info.offset, "tensor offset"));
        if (file.tensor_index_.count(info.name)) return Status::error("duplicate tensor name '" + info.name + "'");
        file.tensor_index_.emplace(info.name, file.tensors_.size());
        file.tensors_.push_back(std::move(info));
    }
    return Status();
}

Status GgufParser::place_tensors(GgufFile& file) {
    const uint64_t align = file.alignment_;
    uint64_t data_start = (static_cast<uint64_t>(pos_) + align - 1) / align * align;
    if (file.tensors_.empty()) return Status();  // vocab-only files may end right here
    if (data_start > size_) return Status::error("file truncated before the tensor data section");
    const uint64_t data_size = size_ - data_start;
    for (auto& info : file.tensors_) {
        const std::string where = "tensor '" + info.name + "': ";
        if (info.offset % align != 0) {
            return Status::error(where + "offset " + std::to_string(info.offset) + " is not aligned to " +
                                 std::to_string(align));
        }
        if (info.offset > data_size || info.n_bytes > data_size - info.offset) {
            return Status::error(where + "data [" + std::to_string(info.offset) + ", +" +
                                 std::to_string(info.n_bytes) + ") extends past the end of the file");
        }
        info.data = data_ + data_start + info.offset;
    }
    return Status();
}

Expected<GgufFile> GgufParser::parse() {
    GgufFile file;
    uint64_t n_tensors = 0, n_kv = 0;
    TS_RETURN_IF_ERROR(read_header(file, n_tensors, n_kv));
    TS_RETURN_IF_ERROR(read_metadata(file, n_kv));
    TS_RETURN_IF_ERROR(read_alignment(file));
    TS_RETURN_IF_ERROR(read_tensor_infos(file, n_tensors));
    TS_RETURN_IF_ERROR(place_tensors(file));
    return file;
}

}  // namespace tessera
