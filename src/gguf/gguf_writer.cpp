// GGUF v3 serialisation: header, metadata, tensor infos, aligned tensor data.
#include "gguf/gguf_writer.h"

#include <cstdio>

#include "core/check.h"

namespace tessera {

void GgufWriter::key(const std::string& k, GgufValueType type) {
    kv_.string(k);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(type));
    ++n_kv_;
}

void GgufWriter::add_string(const std::string& k, const std::string& v) {
    key(k, GgufValueType::STRING);
    kv_.string(v);
}
void GgufWriter::add_uint32(const std::string& k, uint32_t v) {
    key(k, GgufValueType::UINT32);
    kv_.scalar(v);
}
void GgufWriter::add_int32(const std::string& k, int32_t v) {
    key(k, GgufValueType::INT32);
    kv_.scalar(v);
}
void GgufWriter::add_uint64(const std::string& k, uint64_t v) {
    key(k, GgufValueType::UINT64);
    kv_.scalar(v);
}
void GgufWriter::add_float32(const std::string& k, float v) {
    key(k, GgufValueType::FLOAT32);
    kv_.scalar(v);
}
void GgufWriter::add_bool(const std::string& k, bool v) {
    key(k, GgufValueType::BOOL);
    kv_.scalar<uint8_t>(v ? 1 : 0);
}
void GgufWriter::add_string_array(const std::string& k, const std::vector<std::string>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::STRING));
    kv_.scalar<uint64_t>(values.size());
    for (const auto& s : values) kv_.string(s);
}
void GgufWriter::add_float32_array(const std::string& k, const std::vector<float>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::FLOAT32));
    kv_.scalar<uint64_t>(values.size());
    for (float v : values) kv_.scalar(v);
}
void GgufWriter::add_int32_array(const std::string& k, const std::vector<int32_t>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::INT32));
    kv_.scalar<uint64_t>(values.size());
    for (int32_t v : values) kv_.scalar(v);
}

void GgufWriter::value_payload(const GgufValue& v) {
    switch (v.type) {
        case GgufValueType::UINT8: kv_.scalar(static_cast<uint8_t>(v.u)); return;
        case GgufValueType::INT8: kv_.scalar(static_cast<int8_t>(v.i)); return;
        case GgufValueType::UINT16: kv_.scalar(static_cast<uint16_t>(v.u)); return;
        case GgufValueType::INT16: kv_.scalar(static_cast<int16_t>(v.i)); return;
        case GgufValueType::UINT32: kv_.scalar(static_cast<uint32_t>(v.u)); return;
        case GgufValueType::INT32: kv_.scalar(static_cast<int32_t>(v.i)); return;
        case GgufValueType::FLOAT32: kv_.scalar(static_cast<float>(v.f)); return;
        case GgufValueType::BOOL: kv_.scalar<uint8_t>(v.u ? 1 : 0); return;
        case GgufValueType::STRING: kv_.string(v.str); return;
        case GgufValueType::UINT64: kv_.scalar(v.u); return;
        case GgufValueType::INT64: kv_.scalar(v.i); return;
        case GgufValueType::FLOAT64: kv_.scalar(v.f); return;
        case GgufValueType::ARRAY: {
            kv_.scalar<uint32_t>(static_cast<uint32_t>(v.array_type));
            kv_.scalar<uint64_t>(v.array_size());
            for (size_t k = 0; k < v.array_size(); ++k) value_payload(v.element(k));
            return;
        }
    }
    TS_CHECK_MSG(false, "GgufWriter: unknown value type");
}

void GgufWriter::add_value(const std::string& k, const GgufValue& v) {
    key(k, v.type);
    value_payload(v);
}

namespace {

size_t tensor_bytes(GgmlType type, const std::vector<int64_t>& shape) {
    TS_CHECK(!shape.empty() && shape.size() <= 4);
    int64_t rows = 1;
    for (size_t d = 1; d < shape.size(); ++d) rows *= shape[d];
    auto row_bytes = ggml_row_bytes(type, shape[0]);
    TS_CHECK(row_bytes.has_value());
    return *row_bytes * static_cast<size_t>(rows);
}

}  // namespace

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                            std::vector<uint8_t> data) {
    const size_t n_bytes = tensor_bytes(type, shape);
    TS_CHECK(n_bytes == data.size());
    tensors_.push_back(Tensor{name, type, std::move(shape), n_bytes, std::move(data), nullptr});
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                            Producer produce) {
    const size_t n_bytes = tensor_bytes(type, shape);
    tensors_.push_back(Tensor{name, type, std::move(shape), n_bytes, {}, std::move(produce)});
}

std::vector<uint8_t> GgufWriter::header() const {
    ByteWriter out;
    out.raw("GGUF", 4);
    out.scalar<uint32_t>(3);
    out.scalar<uint64_t>(tensors_.size());
    out.scalar<uint64_t>(n_kv_ + (alignment_ != 32 ? 1 : 0));
    out.raw(kv_.bytes().data(), kv_.bytes().size());
    if (alignment_ != 32) {
        out.string("general.alignment");
        out.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::UINT32));
        out.scalar<uint32_t>(alignment_);
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        out.string(t.name);
        out.scalar<uint32_t>(static_cast<uint32_t>(t.shape.size()));
        for (int64_t ne : t.shape) out.scalar<uint64_t>(static_cast<uint64_t>(ne));
        out.scalar<uint32_t>(static_cast<uint32_t>(t.type));
        out.scalar<uint64_t>(offset);
        offset += (t.n_bytes + alignment_ - 1) / alignment_ * alignment_;
    }
    out.pad_to(alignment_);
    return std::move(out.bytes());
}

std::vector<uint8_t> GgufWriter::build() const {
    ByteWriter out;
    const std::vector<uint8_t> head = header();
    out.raw(head.data(), head.size());
    for (const auto& t : tensors_) {
        TS_CHECK_MSG(!t.produce, "GgufWriter::build: a produced tensor needs write_file");
        out.raw(t.data.data(), t.data.size());
        out.pad_to(alignment_);
    }
    return std::move(out.bytes());
}

Status GgufWriter::write_file(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return Status::error("cannot create '" + path + "'");
    const auto write = [&](const uint8_t* data, size_t n) { return std::fwrite(data, 1, n, f) == n; };
    const std::vector<uint8_t> head = header();
    bool ok = write(head.data(), head.size());
    Status status;
    const std::vector<uint8_t> zeros(alignment_, 0);
    for (size_t i = 0; ok && i < tensors_.size(); ++i) {
        const Tensor& t = tensors_[i];
        std::vector<uint8_t> produced;
        if (t.produce) {
            auto bytes = t.produce();
            if (!bytes.ok()) {
                status = bytes.status();
                break;
            }
            produced = std::move(bytes.value());
            TS_CHECK_MSG(produced.size() == t.n_bytes, "GgufWriter: a producer returned the wrong size");
        }
        const std::vector<uint8_t>& data = t.produce ? produced : t.data;
        ok = write(data.data(), data.size()) && write(zeros.data(), (alignment_ - data.size() % alignment_) % alignment_);
    }
    const bool closed = std::fclose(f) == 0;
    if (!status.ok()) return status;
    if (!ok || !closed) return Status::error("cannot write '" + path + "'");
    return Status();
}

}  // namespace tessera
