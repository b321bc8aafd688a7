// The table of tokenizer.ggml.pre families: for each name llama.cpp accepts
// for byte-level BPE, the regex chain that splits text into words and the
// per-family flags llama.cpp sets with it. Names outside the table are an
// error for the caller to report, never a silent fallback.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace tessera {

struct PreFamily {
    std::string_view family;                  // canonical name, for messages
    std::span<const std::string_view> chain;  // patterns, applied in order
    bool ignore_merges = false;  // a word that is itself a token skips merging
    bool add_bos = false;        // llama.cpp's add_bos default for the family
    // false: BPE over raw UTF-8 with spaces as U+2581 and <0xXX> byte
    // fallback (Gemma 4), instead of GPT-2's byte-to-unicode mapping.
    bool byte_level = true;
    // A word of newlines only that is itself a token skips merging (Gemma 4).
    bool whole_newline_runs = false;
};

// The family a tokenizer.ggml.pre value names; nullptr when none does.
const PreFamily* find_pre_family(std::string_view pre);

// Every name find_pre_family accepts, for tests and error messages.
std::vector<std::string_view> known_pre_names();

}  // namespace tessera
