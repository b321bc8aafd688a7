// SentencePiece Unigram (tokenizer.ggml.model = "t5"): the text is normalised
// by the precompiled charsmap (user-defined tokens never get here: the special
// splitter takes them out first, as llama.cpp does), spaces become U+2581 (one
// prefixed; runs merged when the vocabulary asks), then Viterbi picks the
// segmentation with the highest sum of token scores (summed in double
// precision, as llama.cpp and Hugging Face do).
// A character no token covers becomes the unknown token, scored below every
// token, and runs of unknown tokens collapse into one, as SentencePiece does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/charsmap.h"
#include "tokenizer/vocab.h"

namespace tessera {

class UnigramModel {
public:
    static Expected<UnigramModel> create(const Vocab& vocab);

    // Appends the ids of `text` (any bytes). `vocab` must be create()'s.
    void encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const;

    // The normalised text Viterbi runs on, for tests.
    std::string normalize(const Vocab& vocab, std::string_view text) const;

private:
    bool matchable(const Vocab& vocab, int32_t id) const;

    // Calls found(token id, length) for every matchable token that is a
    // prefix of `text`, shortest first.
    template <typename Found>
    void each_prefix_token(const Vocab& vocab, std::string_view text, Found&& found) const;

    CharsMap charsmap_;
    std::vector<int32_t> by_text_;  // matchable token ids sorted by text: a trie walk by binary search
    double unknown_score_ = 0;      // lowest normal score minus 10
};

}  // namespace tessera
