// An importance matrix: for each weight matrix, the sum of squares of each
// input column over a calibration text (`tessera imatrix`), which
// `tessera quantize --imatrix` turns into per-column weights for the rounding
// error. Kept in llama.cpp's GGUF imatrix layout (general.type "imatrix",
// tensors NAME.in_sum2 [cols, n_mat] and NAME.counts [1, n_mat]), so files
// made by llama-imatrix and by tessera are read by both. The file is
// untrusted: shapes, names and values are checked before use.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_file.h"

namespace tessera {

struct ImatrixTensor {
    int64_t cols = 0;           // the weight's row length (GGUF ne[0])
    int64_t n_mat = 1;          // experts of a 3-D expert tensor, else 1
    std::vector<float> sum2;    // [n_mat, cols] sums of squared inputs
    std::vector<float> counts;  // [n_mat] input rows summed

    // Mean squared input of each column of matrix `mat` ([cols]), or empty
    // when that matrix saw no input (an expert no token chose).
    std::vector<float> column_means(int64_t mat) const;
};

struct Imatrix {
    std::map<std::string, ImatrixTensor> tensors;  // by weight tensor name
    std::vector<std::string> datasets;             // the calibration texts
    uint32_t chunk_count = 0;
    uint32_t chunk_size = 0;                       // tokens per chunk
};

// llama.cpp's metadata keys and tensor name suffixes.
inline constexpr const char* kImatrixSum2Suffix = ".in_sum2";
inline constexpr const char* kImatrixCountsSuffix = ".counts";

Status write_imatrix(const Imatrix& imatrix, const std::string& path);
// Errors: not an imatrix GGUF (llama.cpp's legacy .dat layout included),
// unpaired or misshapen tensors, negative or non-finite values.
Expected<Imatrix> parse_imatrix(const GgufFile& file);
Expected<Imatrix> read_imatrix(const std::string& path);

}  // namespace tessera
