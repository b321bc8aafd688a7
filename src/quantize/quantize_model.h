// `tessera quantize`: rewrites a GGUF model with its weights in another
// type, keeping every metadata key (general.file_type updated) and the
// tensor order. Tensors are converted one at a time while the output file
// is written, so memory use stays near one tensor, not one model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "gguf/ggml_type.h"
#include "quantize/imatrix.h"

namespace tessera {

class ThreadPool;

struct QuantizeOptions {
    std::string mix;  // a name from quant_mix_names()
    // Converting already-quantized weights compounds two roundings: refused
    // unless asked for, as llama.cpp does.
    bool allow_requantize = false;
    // Importance matrix (`tessera imatrix`, or llama-imatrix's GGUF file):
    // weights each element's rounding error by its column's mean squared input
    // (tensor/quant.h). Tensors it has no entry for are quantized unweighted.
    const Imatrix* imatrix = nullptr;
    std::string imatrix_path;  // recorded in the output's quantize.imatrix.file
};

struct QuantizeProgress {
    size_t index = 0;  // of the tensor just written, from 0
    size_t count = 0;
    const std::string* name = nullptr;
    GgmlType from = GgmlType::F32;
    GgmlType to = GgmlType::F32;
};

struct QuantizeSummary {
    uint64_t bytes_in = 0;   // tensor data only
    uint64_t bytes_out = 0;
    size_t tensors_converted = 0;
    size_t tensors_copied = 0;
    size_t tensors_weighted = 0;  // converted with importance-matrix weights
};

Expected<QuantizeSummary> quantize_model(const std::string& in_path, const std::string& out_path,
                                         const QuantizeOptions& options, ThreadPool& pool,
                                         const std::function<void(const QuantizeProgress&)>& on_tensor);

}  // namespace tessera
