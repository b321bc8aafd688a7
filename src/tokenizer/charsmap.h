// SentencePiece's precompiled normaliser (tokenizer.ggml.precompiled_charsmap):
// a trie of input byte strings, stored as a XOR-compressed compact double
// array (Kanda 2018), each leaf pointing at a NUL-terminated replacement.
// Layout: u32 little-endian size of the array in bytes, the array's u32
// entries, then the replacement strings. The blob comes from the model file,
// so every read is bounds-checked; a broken entry is "no match", never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessera {

class CharsMap {
public:
    // An empty blob gives the identity map. Rejects a blob whose header does
    // not fit it.
    static Expected<CharsMap> create(std::string blob);

    // The longest prefix of `text` the map has a replacement for: the number of
    // input bytes it covers (0: none) and the replacement.
    struct Match {
        size_t consumed = 0;
        std::string_view replacement;
    };
    Match longest_prefix(std::string_view text) const;

private:
    uint32_t entry(size_t index, bool* ok) const;

    std::string blob_;
    size_t n_entries_ = 0;      // u32 entries of the double array
    size_t strings_offset_ = 0;  // where the replacement strings start in blob_
};

}  // namespace tessera
