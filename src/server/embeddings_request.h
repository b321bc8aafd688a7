// POST /v1/embeddings' body, validated: `input` (a string, a list of strings,
// a list of token ids or a list of those) tokenized into one token list per
// input, `encoding_format`, `dimensions` and `model`, every cap checked
// before any work. Untrusted input: errors are 400s naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/json_util.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

// What validating an embeddings body needs from the loaded model.
struct EmbeddingsContext {
    const Tokenizer* tokenizer = nullptr;
    int64_t max_context = 0;  // tokens one input may have
    int64_t n_embd = 0;       // the vector size (the only `dimensions` accepted)
    RequestLimits limits;     // max_embedding_inputs, max_embedding_tokens
};

struct EmbeddingsRequest {
    std::vector<std::vector<int32_t>> inputs;  // token ids, one list per input, in input order
    std::string model;                         // empty: not given
    bool base64 = false;                       // encoding_format "base64"
    int64_t n_tokens = 0;                      // over all inputs
};

std::optional<ApiError> parse_embeddings_request(const Json& body, const EmbeddingsContext& ctx,
                                                 EmbeddingsRequest& out);

// OpenAI's base64 form of a vector: its float32 values' little-endian bytes.
std::string embedding_base64(const std::vector<float>& v);

}  // namespace tessera
