// Splits prompt text at occurrences of special token strings, before the
// model-specific encoder runs, so "<|im_start|>" can become one id. Which
// tokens are matched follows llama.cpp: user-defined tokens always, control
// and unknown tokens only when the caller asks to parse special text.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace tessera {

// A piece of the input: either raw text [begin, begin + size) or a token.
struct Fragment {
    int32_t token = kNoToken;  // kNoToken for raw text
    size_t begin = 0;
    size_t size = 0;
};

class SpecialSplitter {
public:
    explicit SpecialSplitter(const Vocab& vocab);

    // Longest token strings are extracted first, over the whole text, then the
    // next longest from what is left, and so on.
    std::vector<Fragment> split(const Vocab& vocab, std::string_view text,
                                bool parse_special) const;

private:
    std::vector<int32_t> candidates_;  // control/unknown/user-defined, longest first
};

}  // namespace tessera
