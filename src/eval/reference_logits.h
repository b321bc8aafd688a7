// The file `tessera perplexity --save-logits` writes and --kl-divergence
// reads: for every scored position of a reference run (usually the model at
// full precision), the NLL of the true next token and the top-k tokens'
// log-probabilities. The file is untrusted input: every size and value is
// checked when it is read.
//
// Layout (little-endian): "TSRL", u32 version (1), u32 n_vocab, u32 n_ctx,
// u32 top_k, u64 n_positions, u64 text_hash; then per position an f32 NLL
// and top_k pairs (i32 token, f32 log-prob), most likely first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tessera {

// Identifies the scored text: the token ids and the chunking.
uint64_t scored_text_hash(std::span<const int32_t> tokens, int n_ctx, int n_chunks);

class ReferenceLogits {
public:
    static constexpr uint32_t kMaxTopK = 1024;

    ReferenceLogits(uint32_t n_vocab, uint32_t n_ctx, uint32_t top_k, uint64_t n_positions, uint64_t text_hash);
    static Expected<ReferenceLogits> parse(std::span<const uint8_t> bytes);
    static Expected<ReferenceLogits> load(const std::string& path);
    Status save(const std::string& path) const;

    uint32_t n_vocab() const { return n_vocab_; }
    uint32_t n_ctx() const { return n_ctx_; }
    uint32_t top_k() const { return top_k_; }
    uint64_t n_positions() const { return n_positions_; }
    uint64_t text_hash() const { return text_hash_; }

    float nll(uint64_t position) const { return nll_[position]; }
    std::span<const std::pair<int32_t, float>> top(uint64_t position) const {
        return std::span(top_).subspan(position * top_k_, top_k_);
    }
    // Records position `position` from a row of logits and its true next token.
    void set(uint64_t position, std::span<const float> logits, int32_t next_token, double log_sum_exp);

private:
    uint32_t n_vocab_, n_ctx_, top_k_;
    uint64_t n_positions_, text_hash_;
    std::vector<float> nll_;
    std::vector<std::pair<int32_t, float>> top_;
};

}  // namespace tessera
