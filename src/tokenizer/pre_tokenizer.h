// Regex pre-tokenizer for byte-level BPE: splits text into words before merges,
// with the pattern chain that tokenizer.ggml.pre names. Patterns are compiled
// once per tokenizer with PCRE2 (UTF + UCP, JIT) and owned by this object.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tokenizer/pre_families.h"

namespace tessera {

using Piece = std::pair<size_t, size_t>;  // (offset, length) into the text

// Per-call PCRE2 match data (RAII over pcre2_match_data), so one compiled
// pattern can be shared by threads that tokenize at the same time.
class MatchScratch {
public:
    MatchScratch();
    void* get() const { return data_.get(); }

private:
    struct Deleter {
        void operator()(void* data) const;
    };
    std::unique_ptr<void, Deleter> data_;  // pcre2_match_data_8
};

// One compiled pattern (RAII over pcre2_code).
class CompiledRegex {
public:
    static Expected<CompiledRegex> compile(const std::string& pattern);

    // Appends to `out` the pieces of text[begin, end): every match and every
    // non-empty gap between matches, in order; an empty match is a cut. The pattern sees only that
    // range (lookarounds do not look past it), as in llama.cpp.
    // `text` must be valid UTF-8. Should PCRE2 fail mid-way (a resource
    // limit), the rest of the range becomes one piece: degraded, never unsafe.
    void split(std::string_view text, Piece range, MatchScratch& scratch,
               std::vector<Piece>& out) const;

private:
    struct Deleter {
        void operator()(void* code) const;
    };
    std::unique_ptr<void, Deleter> code_;  // pcre2_code_8
};

class PreTokenizer {
public:
    // Known names: those of pre_families.h (llama.cpp's byte-level BPE
    // families); any other name is an error.
    static Expected<PreTokenizer> create(std::string_view pre);

    // Splits valid UTF-8 text into words, as (offset, length) pairs into `text`.
    std::vector<Piece> split(std::string_view text) const;

    // The table row (pre_families.h): merging and byte-level flags.
    const PreFamily& family() const { return *family_; }

private:
    std::vector<CompiledRegex> chain_;
    const PreFamily* family_ = nullptr;  // static table entry
};

}  // namespace tessera
