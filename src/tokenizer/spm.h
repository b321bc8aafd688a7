// SentencePiece-style BPE (tokenizer.ggml.model = "llama"): greedily merges
// the adjacent pair whose concatenation is the highest-scoring token, then
// spells anything left that is not a token with <0xXX> byte-fallback tokens.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace tessera {

class SpmModel {
public:
    explicit SpmModel(const Vocab& vocab);

    // Appends the ids of `text` (spaces already escaped to U+2581) to `out`.
    // Works on arbitrary bytes: each invalid byte is its own symbol and ends up
    // as a byte-fallback token, so decoding gives the input back.
    // `vocab` must be the one given to the constructor.
    void encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const;

    // Token for one raw byte: <0xXX>, else the one-byte token, else unk,
    // else kNoToken (the byte is dropped).
    int32_t byte_token(uint8_t byte) const { return byte_tokens_[byte]; }

private:
    std::array<int32_t, 256> byte_tokens_{};
};

}  // namespace tessera
