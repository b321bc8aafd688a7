// libFuzzer target: an arbitrary byte string as an importance matrix file
// (`tessera quantize --imatrix`): parsed as GGUF, checked as an imatrix,
// and every matrix's column means computed and used to weight a quantization.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/gguf_file.h"
#include "quantize/imatrix.h"
#include "tensor/quant.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto file = tessera::GgufFile::parse(data, size);
    if (!file) return 0;
    auto imatrix = tessera::parse_imatrix(*file);
    if (!imatrix) return 0;
    std::vector<float> row(256), quantized(256);
    for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i % 13) - 6.0f;
    for (const auto& [name, t] : imatrix->tensors) {
        for (int64_t m = 0; m < t.n_mat && m < 64; ++m) {
            const std::vector<float> means = t.column_means(m);
            if (means.size() < row.size()) continue;
            tessera::quantize_row_weights(tessera::GgmlType::Q4_K, row.data(), quantized.data(), 256, means.data());
        }
    }
    return 0;
}
