// GGUF parsing with every read bounds-checked. The parser walks a byte cursor
// over the buffer; each count and length is checked against the bytes that
// remain before anything is allocated for it.
#include "gguf/gguf_file.h"

#include <bit>
#include <cstring>
#include <limits>

#include "gguf/gguf_parser.h"

namespace tessera {

const char* gguf_value_type_name(GgufValueType type) {
    switch (type) {
        case GgufValueType::UINT8: return "uint8";
        case GgufValueType::INT8: return "int8";
        case GgufValueType::UINT16: return "uint16";
        case GgufValueType::INT16: return "int16";
        case GgufValueType::UINT32: return "uint32";
        case GgufValueType::INT32: return "int32";
        case GgufValueType::FLOAT32: return "float32";
        case GgufValueType::BOOL: return "bool";
        case GgufValueType::STRING: return "string";
        case GgufValueType::ARRAY: return "array";
        case GgufValueType::UINT64: return "uint64";
        case GgufValueType::INT64: return "int64";
        case GgufValueType::FLOAT64: return "float64";
    }
    return "unknown";
}

bool GgufValue::is_integer() const {
    switch (type) {
        case GgufValueType::UINT8:
        case GgufValueType::INT8:
        case GgufValueType::UINT16:
        case GgufValueType::INT16:
        case GgufValueType::UINT32:
        case GgufValueType::INT32:
        case GgufValueType::UINT64:
        case GgufValueType::INT64: return true;
        default: return false;
    }
}

static bool is_signed_type(GgufValueType t) {
    return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
           t == GgufValueType::INT64;
}

size_t GgufValue::array_size() const {
    if (type != GgufValueType::ARRAY) return 0;
    if (array_type == GgufValueType::STRING) return strings.size();
    if (array_type == GgufValueType::ARRAY) return arrays.size();
    return scalars.size();
}

GgufValue GgufValue::element(size_t k) const {
    if (array_type == GgufValueType::ARRAY) return arrays[k];
    GgufValue e;
    e.type = array_type;
    if (array_type == GgufValueType::STRING) {
        e.str = strings[k];
    } else if (e.is_float()) {
        e.f = std::bit_cast<double>(scalars[k]);
    } else if (is_signed_type(array_type)) {
        e.i = static_cast<int64_t>(scalars[k]);
    } else {
        e.u = scalars[k];
    }
    return e;
}

std::string GgufValue::to_display_string(size_t max_items) const {
    switch (type) {
        case GgufValueType::STRING: {
            std::string s = str.size() > 60 ? str.substr(0, 60) + "..." : str;
            std::string out = "\"";
            for (char c : s) out += (c == '\n') ? std::string("\\n") : std::string(1, c);
            return out + "\"";
        }
        case GgufValueType::BOOL: return u ? "true" : "false";
        case GgufValueType::FLOAT32:
        case GgufValueType::FLOAT64: {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g", f);
            return buf;
        }
        case GgufValueType::ARRAY: {
            const size_t n = array_size();
            std::string out = "[" + std::string(gguf_value_type_name(array_type)) + " x " + std::to_string(n) + "]";
            if (n == 0) return out;
            out += " [";
            for (size_t k = 0; k < n && k < max_items; ++k) {
                if (k) out += ", ";
                out += element(k).to_display_string(max_items);
            }
            if (n > max_items) out += ", ...";
            return out + "]";
        }
        default: return is_signed_type(type) ? std::to_string(i) : std::to_string(u);
    }
}

Expected<GgufFile> GgufFile::open(const std::string& path) {
    auto mapped = MappedFile::open(path);
    if (!mapped) return mapped.status();
    auto owner = std::make_unique<MappedFile>(std::move(mapped.value()));
    auto parsed = GgufParser(owner->data(), owner->size()).parse();
    if (!parsed) return Status::error(path + ": " + parsed.error());
    // The parse read the header from the mapping; check the file is still
    // whole now that every extent in it has been validated.
    TS_RETURN_IF_ERROR(owner->populate());
    parsed->mapping_ = std::move(owner);
    return parsed;
}

Expected<GgufFile> GgufFile::parse(const uint8_t* data, size_t size) {
    return GgufParser(data, size).parse();
}

const GgufValue* GgufFile::find(std::string_view key) const {
    auto it = kv_index_.find(std::string(key));
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

uint64_t GgufFile::tensor_bytes() const {
    uint64_t n = 0;
    for (const GgufTensorInfo& t : tensors_) n += t.n_bytes;
    return n;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(std::string(name));
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

static Status wrong_type(std::string_view key, const GgufValue& v, const char* wanted) {
    return Status::error("metadata key '" + std::string(key) + "' has type " +
                         gguf_value_type_name(v.type) + ", expected " + wanted);
}

static Status missing(std::string_view key) {
    return Status::error("metadata key '" + std::string(key) + "' is missing");
}

Expected<std::string> GgufFile::get_string(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (v->type != GgufValueType::STRING) return wrong_type(key, *v, "string");
    return v->str;
}

Expected<uint64_t> GgufFile::get_uint(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (!v->is_integer()) return wrong_type(key, *v, "an integer");
    if (is_signed_type(v->type)) {
        if (v->i < 0) return Status::error("metadata key '" + std::string(key) + "' is negative");
        return static_cast<uint64_t>(v->i);
    }
    return v->u;
}

Expected<int64_t> GgufFile::get_int(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (!v->is_integer()) return wrong_type(key, *v, "an integer");
    if (is_signed_type(v->type)) return v->i;
    if (v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Status::error("metadata key '" + std::string(key) + "' is out of range");
    }
    return static_cast<int64_t>(v->u);
}

Expected<double> GgufFile::get_float(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (!v->is_float()) return wrong_type(key, *v, "a float");
    return v->f;
}

Expected<bool> GgufFile::get_bool(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (v->type != GgufValueType::BOOL) return wrong_type(key, *v, "bool");
    return v->u != 0;
}

Expected<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (v->type != GgufValueType::ARRAY || v->array_type != GgufValueType::STRING) {
        return wrong_type(key, *v, "array of string");
    }
    return std::vector<std::string>(v->strings.begin(), v->strings.end());
}

Expected<std::vector<double>> GgufFile::get_float_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    if (v->type != GgufValueType::ARRAY ||
        (v->array_type != GgufValueType::FLOAT32 && v->array_type != GgufValueType::FLOAT64)) {
        return wrong_type(key, *v, "array of float");
    }
    std::vector<double> out;
    out.reserve(v->scalars.size());
    for (uint64_t bits : v->scalars) out.push_back(std::bit_cast<double>(bits));
    return out;
}

Expected<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return missing(key);
    GgufValue element_kind;
    element_kind.type = v->array_type;
    if (v->type != GgufValueType::ARRAY || !element_kind.is_integer()) {
        return wrong_type(key, *v, "array of integer");
    }
    const bool is_signed = is_signed_type(v->array_type);
    std::vector<int64_t> out;
    out.reserve(v->scalars.size());
    for (uint64_t bits : v->scalars) {
        if (!is_signed && bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return Status::error("metadata key '" + std::string(key) + "' has an element out of range");
        }
        out.push_back(static_cast<int64_t>(bits));
    }
    return out;
}

Expected<std::string> GgufFile::get_string_or(std::string_view key, std::string fallback) const {
    return find(key) ? get_string(key) : Expected<std::string>(std::move(fallback));
}

Expected<uint64_t> GgufFile::get_uint_or(std::string_view key, uint64_t fallback) const {
    return find(key) ? get_uint(key) : Expected<uint64_t>(fallback);
}

Expected<double> GgufFile::get_float_or(std::string_view key, double fallback) const {
    return find(key) ? get_float(key) : Expected<double>(fallback);
}

Expected<bool> GgufFile::get_bool_or(std::string_view key, bool fallback) const {
    return find(key) ? get_bool(key) : Expected<bool>(fallback);
}

}  // namespace tessera
