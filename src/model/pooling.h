// Sentence embeddings from a forward pass's final hidden states (after the
// output norm, before the LM head): which positions a pooling reads, how
// they combine into one vector, and the L2 normalisation OpenAI clients expect.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_file.h"

namespace tessera {

// The values of GGUF's `<arch>.pooling_type` (llama.cpp's enum).
enum class Pooling : int32_t { None = 0, Mean = 1, Cls = 2, Last = 3, Rank = 4 };

const char* pooling_name(Pooling p);                    // "none", "mean", "cls", "last", "rank"
Expected<Pooling> parse_pooling(std::string_view name);  // the inverse (the CLI's --pooling)

// The model's pooling from `<arch>.pooling_type`. A model without the key
// (decoder-only chat models) pools the last token: the convention of
// embedding models built from decoders (e5-mistral, gte-Qwen, Qwen3-Embedding)
// and vLLM's default for causal models; llama.cpp's server would refuse such a
// model on /v1/embeddings ("pooling type none") unless given --pooling.
// Errors: a value outside the enum.
Expected<Pooling> model_pooling(const GgufFile& file, const std::string& arch);

// Ok when `p` can produce one vector per input (mean, cls, last).
Status check_sentence_pooling(Pooling p);

// Which positions of a prompt of n_prompt tokens a pooling reads.
bool pooling_reads(Pooling p, int64_t pos, int64_t n_prompt);
// Whether a cached prefix may stand in for computed positions: only when
// the pooling reads nothing but the last one.
bool pooling_allows_prefix_reuse(Pooling p);

// Folds hidden-state rows of one sequence into one vector, in position
// order; a chunked prefill adds its chunks as they come.
class PoolingAccumulator {
public:
    PoolingAccumulator(Pooling p, int64_t n_embd) : pooling_(p), sum_(static_cast<size_t>(n_embd), 0.0) {}

    void reset();  // a preempted sequence starts over
    // The hidden state of one position that pooling_reads accepts.
    void add(std::span<const float> row);
    int64_t n_rows() const { return n_rows_; }
    // The pooled vector, L2-normalised (a zero vector stays zero).
    std::vector<float> finish() const;

private:
    Pooling pooling_;
    std::vector<double> sum_;  // [n_embd] double: mean pooling sums thousands of rows
    int64_t n_rows_ = 0;
};

}  // namespace tessera
