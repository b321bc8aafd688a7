// Reads and writes importance matrices in llama.cpp's GGUF layout (see
// imatrix.h): every count and shape is checked against the file before use.
#include "quantize/imatrix.h"

#include <cmath>
#include <cstring>
#include <fstream>

#include "core/check.h"
#include "gguf/gguf_writer.h"

namespace tessera {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(float));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// The F32 values of a tensor [ne0, ne1], checked finite and >= 0. GGUF
// writers drop trailing dimensions of 1, so llama-imatrix's [cols, 1] sums
// and [1, 1] counts of a dense weight come as 1-D tensors.
Expected<std::vector<float>> nonnegative_floats(const GgufTensorInfo& t) {
    if (t.type != GgmlType::F32 || t.n_dims < 1 || t.n_dims > 2) {
        return Status::error("imatrix tensor '" + t.name + "' is not a 1-D or 2-D F32 tensor");
    }
    std::vector<float> v(static_cast<size_t>(t.n_elements()));
    std::memcpy(v.data(), t.data, v.size() * sizeof(float));  // the parser checked n_bytes
    for (float x : v) {
        if (!std::isfinite(x) || x < 0.0f) {
            return Status::error("imatrix tensor '" + t.name + "' holds a negative or non-finite value");
        }
    }
    return v;
}

}  // namespace

std::vector<float> ImatrixTensor::column_means(int64_t mat) const {
    const float count = counts[static_cast<size_t>(mat)];
    if (!(count > 0.0f)) return {};
    std::vector<float> means(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) {
        means[static_cast<size_t>(c)] = sum2[static_cast<size_t>(mat * cols + c)] / count;
    }
    return means;
}

Status write_imatrix(const Imatrix& imatrix, const std::string& path) {
    GgufWriter writer;
    writer.add_string("general.type", "imatrix");
    writer.add_string_array("imatrix.datasets", imatrix.datasets);
    writer.add_uint32("imatrix.chunk_count", imatrix.chunk_count);
    writer.add_uint32("imatrix.chunk_size", imatrix.chunk_size);
    for (const auto& [name, t] : imatrix.tensors) {
        TS_CHECK(t.sum2.size() == static_cast<size_t>(t.cols * t.n_mat));
        TS_CHECK(t.counts.size() == static_cast<size_t>(t.n_mat));
        writer.add_tensor(name + kImatrixSum2Suffix, GgmlType::F32, {t.cols, t.n_mat}, float_bytes(t.sum2));
        writer.add_tensor(name + kImatrixCountsSuffix, GgmlType::F32, {1, t.n_mat}, float_bytes(t.counts));
    }
    return writer.write_file(path);
}

Expected<Imatrix> parse_imatrix(const GgufFile& file) {
    auto type = file.get_string_or("general.type", "");
    if (!type.ok()) return type.status();
    if (type.value() != "imatrix") return Status::error("not an importance matrix (general.type is not \"imatrix\")");
    Imatrix out;
    auto datasets = file.find("imatrix.datasets") ? file.get_string_array("imatrix.datasets")
                                                  : Expected<std::vector<std::string>>(std::vector<std::string>{});
    if (!datasets.ok()) return datasets.status();
    out.datasets = std::move(datasets.value());
    auto chunks = file.get_uint_or("imatrix.chunk_count", 0);
    auto chunk_size = file.get_uint_or("imatrix.chunk_size", 0);
    if (!chunks.ok()) return chunks.status();
    if (!chunk_size.ok()) return chunk_size.status();
    if (chunks.value() > UINT32_MAX || chunk_size.value() > UINT32_MAX) {
        return Status::error("imatrix chunk count or size out of range");
    }
    out.chunk_count = static_cast<uint32_t>(chunks.value());
    out.chunk_size = static_cast<uint32_t>(chunk_size.value());
    for (const GgufTensorInfo& t : file.tensors()) {
        if (ends_with(t.name, kImatrixCountsSuffix)) {
            const std::string weight = t.name.substr(0, t.name.size() - std::strlen(kImatrixCountsSuffix));
            if (!file.find_tensor(weight + kImatrixSum2Suffix)) {
                return Status::error("imatrix tensor '" + t.name + "' has no " + kImatrixSum2Suffix + " partner");
            }
            continue;
        }
        if (!ends_with(t.name, kImatrixSum2Suffix)) {
            return Status::error("imatrix tensor '" + t.name + "' is neither NAME" + kImatrixSum2Suffix + " nor NAME" +
                                 kImatrixCountsSuffix);
        }
        const std::string weight = t.name.substr(0, t.name.size() - std::strlen(kImatrixSum2Suffix));
        const GgufTensorInfo* counts = file.find_tensor(weight + kImatrixCountsSuffix);
        if (!counts) {
            return Status::error("imatrix tensor '" + t.name + "' has no " + kImatrixCountsSuffix + " partner");
        }
        auto sum2 = nonnegative_floats(t);
        if (!sum2.ok()) return sum2.status();
        auto count_values = nonnegative_floats(*counts);
        if (!count_values.ok()) return count_values.status();
        if (counts->ne[0] != 1 || counts->ne[1] != t.ne[1]) {
            return Status::error("imatrix tensor '" + counts->name + "' is not [1, " + std::to_string(t.ne[1]) + "]");
        }
        out.tensors[weight] = ImatrixTensor{t.ne[0], t.ne[1], std::move(sum2.value()), std::move(count_values.value())};
    }
    return out;
}

Expected<Imatrix> read_imatrix(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    if (!in.read(magic, sizeof magic)) return Status::error("cannot read the importance matrix " + path);
    if (std::memcmp(magic, "GGUF", 4) != 0) {
        return Status::error(path + " is not a GGUF importance matrix (llama.cpp's legacy .dat layout is not read: "
                                    "`llama-imatrix --in-file " + path + " -o NEW.gguf` rewrites it)");
    }
    auto file = GgufFile::open(path);
    if (!file.ok()) return file.status();
    auto parsed = parse_imatrix(file.value());
    if (!parsed.ok()) return Status::error(path + ": " + parsed.status().message());
    return parsed;
}

}  // namespace tessera
