// The tokenizer the engine and server use: text <-> token ids for the model's
// own vocabulary (SentencePiece BPE, byte-level BPE, WordPiece or Unigram), built from GGUF
// metadata, with llama.cpp's handling of special tokens and added BOS/EOS.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/detokenizer.h"  // IncrementalDetokenizer, for users of Tokenizer
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_split.h"
#include "tokenizer/spm.h"
#include "tokenizer/unigram.h"
#include "tokenizer/vocab.h"
#include "tokenizer/wordpiece.h"

namespace tessera {

class GgufFile;

// How encode() treats its text; call as encode(text, {.add_special = true}).
struct EncodeOptions {
    bool add_special = false;    // prepend BOS / append EOS where the vocabulary asks for them
    // Text like "<|im_start|>" becomes that control token; otherwise it is
    // tokenized as plain text (user-defined tokens are matched either way,
    // as in llama.cpp).
    bool parse_special = false;
};

// Immutable after construction: encode / decode / token_to_piece are const and
// may be called from many threads at once.
class Tokenizer {
public:
    static Expected<Tokenizer> from_gguf(const GgufFile& gguf);
    static Expected<Tokenizer> from_vocab(Vocab vocab);

    // Text (any bytes) -> ids. Byte-level BPE and WordPiece replace each byte of invalid
    // UTF-8 with U+FFFD first (as llama.cpp does); SentencePiece keeps the
    // bytes via <0xXX> tokens.
    std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const;

    // The bytes a token stands for: byte-level decoded, U+2581 -> space,
    // <0x41> -> "A". Control and unknown tokens give "" unless options.render_special,
    // in which case their text. Ids outside the vocabulary give "".
    const std::string& token_to_piece(int32_t id, const DecodeOptions& options = {}) const;

    // Concatenated pieces. Where the vocabulary adds a space prefix when
    // encoding, one leading space of the first token's piece is removed
    // (llama.cpp's detokenize with remove_special = false).
    std::string decode(std::span<const int32_t> ids, const DecodeOptions& options = {}) const;

    // Every token encode() emits stands for at most this many bytes of its
    // input (the longest token's bytes; a special token's literal text), so
    // text of B bytes encodes to at least ceil(B / max_token_bytes()) tokens.
    // 0: no such bound, because some byte has no token and no unknown token
    // stands in, so encode() may drop input.
    size_t max_token_bytes() const { return max_token_bytes_; }
    // That lower bound on encode(text, ...).size() without encoding: 0 when
    // there is no bound.
    size_t min_tokens_for_bytes(size_t n_bytes) const {
        return max_token_bytes_ == 0 ? 0 : (n_bytes + max_token_bytes_ - 1) / max_token_bytes_;
    }

    int32_t n_vocab() const { return vocab_.n_tokens(); }
    int32_t bos() const { return vocab_.bos(); }
    int32_t eos() const { return vocab_.eos(); }
    // tokenizer.ggml.eot_token_id, else the first of llama.cpp's end-of-turn
    // names (<|eot_id|>, <|im_end|>, ...) found in the vocabulary, else kNoToken.
    int32_t eot() const { return eot_; }
    // End of generation: eos, eot, eom and tokens llama.cpp treats as such by
    // name (<|im_end|>, <|endoftext|>, <end_of_turn>, <|eot_id|>, ...).
    bool is_eog(int32_t id) const;
    bool add_bos() const { return vocab_.add_bos(); }
    bool add_eos() const { return vocab_.add_eos(); }
    bool add_space_prefix() const { return vocab_.add_space_prefix(); }
    // Raw vocabulary text of a token; id must be in [0, n_vocab()).
    const std::string& token_text(int32_t id) const;
    TokenType token_type(int32_t id) const;
    const Vocab& vocab() const { return vocab_; }

private:
    explicit Tokenizer(Vocab vocab);
    void encode_raw(std::string_view raw, bool prev_was_special, std::vector<int32_t>& out) const;
    void encode_raw_utf8_bpe(std::string_view raw, std::vector<int32_t>& out) const;
    Status init_bpe();
    void init_pieces_and_eog();
    void init_max_token_bytes();

    Vocab vocab_;
    ByteLevelMap byte_map_;
    SpecialSplitter special_;
    std::optional<PreTokenizer> pre_;  // byte-level BPE only
    std::optional<BpeModel> bpe_;      // byte-level BPE only
    std::optional<SpmModel> spm_;      // SentencePiece only
    std::optional<WordPieceModel> wpm_;  // WordPiece only
    std::optional<UnigramModel> ugm_;    // Unigram only
    std::vector<std::string> pieces_;  // [n_vocab] bytes of each token (special -> "")
    std::vector<bool> eog_;            // [n_vocab]
    int32_t eot_ = kNoToken;
    size_t max_token_bytes_ = 0;
    std::string empty_;
};

}  // namespace tessera
