// The tokenizer vocabulary: token texts, scores, types, BPE merges and the
// special token ids, read from GGUF metadata (untrusted) and validated once, so
// the encoders can index it without further checks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace tessera {

class GgufFile;

// Values of tokenizer.ggml.token_type (same numbering as llama.cpp).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class VocabKind {
    Spm,  // tokenizer.ggml.model = "llama": SentencePiece BPE with scores
    Bpe,  // tokenizer.ggml.model = "gpt2": byte-level BPE with merges
    Wpm,  // tokenizer.ggml.model = "bert": WordPiece, U+2581 marks word starts
    Ugm,  // tokenizer.ggml.model = "t5": SentencePiece Unigram with scores
};

inline constexpr int32_t kNoToken = -1;

// A byte token's text: "<0xXX>" with two hex digits.
bool is_byte_token_text(std::string_view text);

// Everything the metadata says, before validation. Tests build these directly.
struct VocabSpec {
    VocabKind kind = VocabKind::Bpe;
    std::string pre = "default";  // tokenizer.ggml.pre
    std::vector<std::string> tokens;
    std::vector<float> scores;      // empty or one per token
    std::vector<int32_t> types;     // empty (all Normal) or one per token
    std::vector<std::string> merges;  // "left right", BPE only
    int64_t bos = kNoToken;
    int64_t eos = kNoToken;
    int64_t eot = kNoToken;
    int64_t eom = kNoToken;
    int64_t unk = kNoToken;
    int64_t pad = kNoToken;
    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = false;
    // WordPiece's BERT normaliser (tokenizer.ggml.normalizer.*).
    bool lowercase = true;
    bool strip_accents = true;
    // Unigram: tokenizer.ggml.precompiled_charsmap (bytes) and whether runs of
    // spaces collapse (tokenizer.ggml.remove_extra_whitespaces).
    std::string charsmap;
    bool remove_extra_whitespaces = false;
};

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Vocab {
public:
    // Validates a spec: sizes agree, ids in range, types known, merges name
    // known tokens, SentencePiece byte tokens look like <0xXX>.
    static Expected<Vocab> create(VocabSpec spec);
    // Reads tokenizer.ggml.* keys, applying llama.cpp's defaults per model type.
    static Expected<Vocab> from_gguf(const GgufFile& gguf);

    VocabKind kind() const { return spec_.kind; }
    const std::string& pre() const { return spec_.pre; }
    int32_t n_tokens() const { return static_cast<int32_t>(spec_.tokens.size()); }
    const std::string& text(int32_t id) const { return spec_.tokens[static_cast<size_t>(id)]; }
    float score(int32_t id) const;
    TokenType type(int32_t id) const;
    const std::vector<std::string>& merges() const { return spec_.merges; }

    // Id of the token with exactly this text (the last one if repeated), or kNoToken.
    int32_t find(std::string_view text) const;

    int32_t bos() const { return static_cast<int32_t>(spec_.bos); }
    int32_t eos() const { return static_cast<int32_t>(spec_.eos); }
    int32_t eot() const { return static_cast<int32_t>(spec_.eot); }
    int32_t eom() const { return static_cast<int32_t>(spec_.eom); }
    int32_t unk() const { return static_cast<int32_t>(spec_.unk); }
    int32_t pad() const { return static_cast<int32_t>(spec_.pad); }
    bool add_bos() const { return spec_.add_bos; }
    bool add_eos() const { return spec_.add_eos; }
    bool add_space_prefix() const { return spec_.add_space_prefix; }
    bool lowercase() const { return spec_.lowercase; }
    bool strip_accents() const { return spec_.strip_accents; }
    const std::string& charsmap() const { return spec_.charsmap; }
    bool remove_extra_whitespaces() const { return spec_.remove_extra_whitespaces; }
    // gpt-oss's harmony vocabulary (o200k_harmony): it has <|return|>,
    // <|call|> and <|end|>. <|end|> then ends a message, not generation.
    bool harmony() const { return harmony_; }

private:
    Status validate_and_index();
    void mark_harmony_tokens();

    bool harmony_ = false;

    VocabSpec spec_;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> text_to_id_;
};

}  // namespace tessera
