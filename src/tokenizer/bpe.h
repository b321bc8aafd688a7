// BPE merges (tokenizer.ggml.model = "gpt2", "gemma4"): turns one
// pre-tokenized word (byte-to-unicode mapped, or raw UTF-8 for Gemma 4) into
// token ids by applying the lowest-ranked merge first, in O(n log n) with a
// priority queue.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizer/vocab.h"

namespace tessera {

class BpeModel {
public:
    // Indexes the vocabulary's merges by (left id, right id). A merge whose
    // result is not a token is an error.
    // byte_fallback: a symbol that is no token is spelled with <0xXX> tokens
    // (raw UTF-8 BPE); otherwise it becomes the unknown token, if any.
    static Expected<BpeModel> create(const Vocab& vocab, bool ignore_merges, bool byte_fallback = false);

    // Appends the ids of `word` (already byte-level mapped) to `out`. `vocab`
    // must be the one given to create().
    void encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) const;

private:
    struct Merge {
        int32_t rank;
        int32_t result;
    };
    static uint64_t key(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
               static_cast<uint32_t>(right);
    }
    const Merge* find_merge(int32_t left, int32_t right) const;

    std::unordered_map<uint64_t, Merge> merges_;
    bool ignore_merges_ = false;
    bool byte_fallback_ = false;
    std::array<int32_t, 256> byte_tokens_{};  // <0xXX> ids, kNoToken where missing
};

}  // namespace tessera
