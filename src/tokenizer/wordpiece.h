// WordPiece (tokenizer.ggml.model = "bert"): BERT's normaliser (optional
// lowercasing and accent stripping; control characters dropped; punctuation,
// ASCII symbols and CJK ideographs as words of their own), then per
// whitespace-separated word the longest vocabulary match from the left,
// repeatedly. GGUF spells word-initial pieces with a leading U+2581 and
// continuation pieces bare (HF's "##" removed), as llama.cpp's converter writes
// them; a word with any unmatched part becomes the unknown token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace tessera {

class WordPieceModel {
public:
    explicit WordPieceModel(const Vocab& vocab);

    // Appends the ids of valid UTF-8 `text`. `vocab` must be the constructor's.
    void encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const;

    // The normalised words encode() matches, for tests.
    std::vector<std::string> words(const Vocab& vocab, std::string_view text) const;

private:
    size_t max_token_len_ = 0;  // bytes of the longest token text
};

}  // namespace tessera
