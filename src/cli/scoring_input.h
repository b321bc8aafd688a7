// The text `perplexity` and `imatrix` score: read whole, tokenized as
// llama.cpp's tools tokenize it (special tokens added, and BOS before each
// chunk where the vocabulary asks for one), and counted in chunks of
// options.n_ctx.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "core/status.h"
#include "eval/chunked_scoring.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct ScoringInput {
    std::vector<int32_t> tokens;
    int n_chunks = 0;
};

// Sets options.bos; an error when the file cannot be read or holds less
// than one chunk.
inline Expected<ScoringInput> load_scoring_input(const Tokenizer& tokenizer, const std::string& path,
                                                 ChunkedScoringOptions& options) {
    auto text = read_text(path);
    if (!text) return text.status();
    ScoringInput in;
    in.tokens = tokenizer.encode(*text, {.add_special = true});
    if (tokenizer.add_bos()) options.bos = tokenizer.bos();
    in.n_chunks = scored_chunks(static_cast<int64_t>(in.tokens.size()), options);
    if (in.n_chunks == 0) {
        return Status::error("the text has " + std::to_string(in.tokens.size()) + " tokens, fewer than one chunk of " +
                             std::to_string(options.n_ctx) + " (-c)");
    }
    return in;
}

}  // namespace tessera
