// Sums of squared matmul inputs per weight column, gathered while forward
// passes run: the statistics of an importance matrix (`tessera imatrix`,
// quantize/imatrix.h). The forward pass records each weight's input rows
// (ForwardPass::activation_stats); weights are told apart by where their
// bytes lie in the model file, so expert slices of a 3-D tensor count per
// expert, and each row range of a fused matrix (phi3's attn_qkv) counts
// for the whole tensor (its rows then count once per range; means are the same).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"

namespace tessera {

class ActivationStats {
public:
    struct Entry {
        std::string name;             // the weight tensor's
        int64_t cols = 0;             // its row length
        int64_t n_mat = 1;            // experts of a 3-D tensor, else 1
        const uint8_t* begin = nullptr;  // its bytes in the mapping
        size_t mat_bytes = 0;         // one matrix (expert) of it
        std::vector<double> sum2;     // [n_mat, cols]
        std::vector<int64_t> counts;  // [n_mat] rows recorded
    };

    // One entry per layer weight tensor ("blk.*", 1 to 3 dimensions) of `file`,
    // which must outlive this object (entries point into its mapping).
    explicit ActivationStats(const GgufFile& file);

    // Adds the squares of x's n rows ([n, w.cols]), the input of a matmul with
    // w. Inputs of weights outside the layers (the output head) are not kept.
    // Calls for different matrices (experts) may run concurrently.
    void record(const WeightMatrix& w, const float* x, int64_t n);

    // Entries in file order; those never recorded have all counts 0.
    const std::vector<Entry>& entries() const { return entries_; }

private:
    std::vector<Entry> entries_;
    std::vector<size_t> by_address_;  // entry indices sorted by begin
};

}  // namespace tessera
