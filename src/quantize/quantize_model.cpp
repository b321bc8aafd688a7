// Reads every tensor's source rows, converts them on the thread pool and
// streams the result into a new GGUF file (see quantize_model.h).
#include "quantize/quantize_model.h"

#include <cstdio>

#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "quantize/quant_mix.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// Keys the writer sets itself, or that describe the old weights.
bool is_replaced_key(const std::string& key) {
    return key == "general.alignment" || key == "general.file_type" || key == "general.quantization_version" ||
           key.rfind("quantize.imatrix.", 0) == 0;
}

// The importance matrix's entry for t, checked against t's shape: null when
// there is none (or no matrix), an error when it was made for another model.
Expected<const ImatrixTensor*> importance_of(const GgufTensorInfo& t, const Imatrix* imatrix) {
    if (imatrix == nullptr) return nullptr;
    auto it = imatrix->tensors.find(t.name);
    if (it == imatrix->tensors.end()) return nullptr;
    const int64_t n_mat = t.n_dims == 3 ? t.ne[2] : 1;
    if (it->second.cols != t.ne[0] || it->second.n_mat != n_mat || t.n_dims > 3) {
        return Status::error("the importance matrix's entry for '" + t.name + "' has " +
                             std::to_string(it->second.n_mat) + " x " + std::to_string(it->second.cols) +
                             " values, the tensor " + std::to_string(n_mat) + " x " + std::to_string(t.ne[0]) +
                             ": was it made for another model?");
    }
    return &it->second;
}

// Rows of each matrix share their importance: one [cols] row per matrix
// (expert), or empty (unweighted) where it saw no input.
std::vector<uint8_t> convert_tensor(const GgufTensorInfo& t, GgmlType to, const ImatrixTensor* importance,
                                    ThreadPool& pool) {
    const int64_t row = t.ne[0], rows = t.n_elements() / row;
    const size_t in_row_bytes = *ggml_row_bytes(t.type, row), out_row_bytes = *ggml_row_bytes(to, row);
    std::vector<std::vector<float>> means;
    if (importance != nullptr) {
        for (int64_t m = 0; m < importance->n_mat; ++m) means.push_back(importance->column_means(m));
    }
    const int64_t rows_per_mat = means.empty() ? rows : rows / static_cast<int64_t>(means.size());
    std::vector<uint8_t> out(out_row_bytes * static_cast<size_t>(rows));
    pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
        std::vector<float> values(static_cast<size_t>(row));
        for (int64_t r = begin; r < end; ++r) {
            const float* weights = nullptr;
            if (!means.empty() && !means[static_cast<size_t>(r / rows_per_mat)].empty()) {
                weights = means[static_cast<size_t>(r / rows_per_mat)].data();
            }
            dequantize_row(t.type, t.data + static_cast<size_t>(r) * in_row_bytes, values.data(), row);
            quantize_row_weights(to, values.data(), out.data() + static_cast<size_t>(r) * out_row_bytes, row, weights);
        }
    });
    return out;
}

void add_imatrix_metadata(GgufWriter& writer, const QuantizeOptions& options) {
    const Imatrix& m = *options.imatrix;
    writer.add_string("quantize.imatrix.file", options.imatrix_path);
    if (!m.datasets.empty()) writer.add_string("quantize.imatrix.dataset", m.datasets.front());
    writer.add_int32("quantize.imatrix.entries_count", static_cast<int32_t>(m.tensors.size()));
    if (m.chunk_count > 0) writer.add_int32("quantize.imatrix.chunks_count", static_cast<int32_t>(m.chunk_count));
}

}  // namespace

Expected<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                         const QuantizeOptions& options, ThreadPool& pool,
                                         const std::function<void(const QuantizeProgress&)>& on_tensor) {
    auto mix = find_quant_mix(options.mix);
    if (!mix.ok()) return mix.status();
    auto file = GgufFile::open(in_path);
    if (!file.ok()) return file.status();
    const GgufFile& in = file.value();
    auto arch = in.get_string_or("general.architecture", "");
    if (!arch.ok()) return arch.status();
    auto n_layers = in.get_uint_or(arch.value() + ".block_count", 0);
    if (!n_layers.ok()) return n_layers.status();
    const bool has_output = in.find_tensor("output.weight") != nullptr;

    GgufWriter writer;
    for (const auto& [key, value] : in.metadata()) {
        if (!is_replaced_key(key)) writer.add_value(key, value);
    }
    writer.add_uint32("general.file_type", mix->file_type);
    writer.add_uint32("general.quantization_version", 2);
    writer.set_alignment(static_cast<uint32_t>(in.alignment()));
    if (options.imatrix != nullptr) add_imatrix_metadata(writer, options);

    QuantizeSummary summary;
    const size_t count = in.tensors().size();
    for (size_t i = 0; i < count; ++i) {
        const GgufTensorInfo& t = in.tensors()[i];
        if (t.ne[0] <= 0) return Status::error("tensor '" + t.name + "' has an empty row");
        const TensorShapeInfo shape{t.name, static_cast<int>(t.n_dims), t.ne[0], t.type};
        const GgmlType to = choose_tensor_type(mix.value(), shape, static_cast<int>(n_layers.value()), has_output);
        if (to != t.type) {
            if (!is_supported_weight_type(t.type)) {
                return Status::error("tensor '" + t.name + "' has type " + ggml_type_name(t.type) +
                                     ", which tessera cannot convert");
            }
            if (!is_float_type(t.type) && !options.allow_requantize) {
                return Status::error("tensor '" + t.name + "' is already quantized (" + ggml_type_name(t.type) +
                                     "); --allow-requantize converts it anyway, compounding both roundings");
            }
        }
        const ImatrixTensor* importance = nullptr;
        if (to != t.type && uses_importance(to)) {
            auto found = importance_of(t, options.imatrix);
            if (!found.ok()) return found.status();
            importance = found.value();
            summary.tensors_weighted += importance != nullptr;
        }
        summary.bytes_in += t.n_bytes;
        summary.bytes_out += *ggml_row_bytes(to, t.ne[0]) * static_cast<size_t>(t.n_elements() / t.ne[0]);
        ++(to == t.type ? summary.tensors_copied : summary.tensors_converted);
        std::vector<int64_t> shape_out(t.ne, t.ne + t.n_dims);
        writer.add_tensor(t.name, to, std::move(shape_out), [&t, to, importance, i, count, &pool, &on_tensor]() {
            std::vector<uint8_t> bytes = to == t.type ? std::vector<uint8_t>(t.data, t.data + t.n_bytes)
                                                      : convert_tensor(t, to, importance, pool);
            if (on_tensor) on_tensor(QuantizeProgress{i, count, &t.name, t.type, to});
            return Expected<std::vector<uint8_t>>(std::move(bytes));
        });
    }
    TS_RETURN_IF_ERROR(writer.write_file(out_path));
    return summary;
}

}  // namespace tessera
