// Tokenizer: ties the vocabulary, the special-token splitter and the model's
// encoder together, and precomputes every token's decoded bytes (see tokenizer.h).
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "core/check.h"
#include "gguf/gguf_file.h"
#include "tokenizer/utf8.h"

namespace tessera {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581

// Names llama.cpp treats as end-of-generation, in order of preference for eot.
constexpr std::array<std::string_view, 12> kEogNames = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
    "<EOT>",      "_<EOT>",     "<|end_of_text|>", "<end_of_utterance>", "<|return|>", "<|call|>"};

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    for (size_t hit = s.find(from); hit != std::string_view::npos; hit = s.find(from, pos)) {
        out.append(s.substr(pos, hit - pos));
        out.append(to);
        pos = hit + from.size();
    }
    out.append(s.substr(pos));
    return out;
}

uint8_t parse_byte_token(std::string_view text) {  // "<0xXX>", checked by is_byte_token_text
    auto nibble = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return c - 'A' + 10;
    };
    return static_cast<uint8_t>(nibble(text[3]) * 16 + nibble(text[4]));
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)), special_(vocab_) {}

Expected<Tokenizer> Tokenizer::from_gguf(const GgufFile& gguf) {
    auto vocab = Vocab::from_gguf(gguf);
    if (!vocab) return vocab.status();
    return from_vocab(std::move(*vocab));
}

Expected<Tokenizer> Tokenizer::from_vocab(Vocab vocab) {
    Tokenizer t(std::move(vocab));
    switch (t.vocab_.kind()) {
        case VocabKind::Bpe:
            TS_RETURN_IF_ERROR(t.init_bpe());
            break;
        case VocabKind::Spm:
            t.spm_.emplace(t.vocab_);
            break;
        case VocabKind::Wpm:
            t.wpm_.emplace(t.vocab_);
            break;
        case VocabKind::Ugm: {
            auto ugm = UnigramModel::create(t.vocab_);
            if (!ugm) return ugm.status();
            t.ugm_ = std::move(*ugm);
            break;
        }
    }
    t.init_pieces_and_eog();
    t.init_max_token_bytes();
    return t;
}

Status Tokenizer::init_bpe() {
    auto pre = PreTokenizer::create(vocab_.pre());
    if (!pre) return pre.status();
    const PreFamily& family = pre->family();
    auto bpe = BpeModel::create(vocab_, family.ignore_merges, !family.byte_level);
    if (!bpe) return bpe.status();
    pre_ = std::move(*pre);
    bpe_ = std::move(*bpe);
    return ok_status();
}

void Tokenizer::init_pieces_and_eog() {
    const int32_t n = vocab_.n_tokens();
    // SentencePiece, WordPiece, Unigram and raw-UTF-8 BPE spell spaces as
    // U+2581; byte-level BPE maps bytes.
    const bool spm = vocab_.kind() != VocabKind::Bpe || !pre_->family().byte_level;
    pieces_.assign(static_cast<size_t>(n), std::string());
    for (int32_t id = 0; id < n; ++id) {
        const std::string& text = vocab_.text(id);
        std::string& piece = pieces_[static_cast<size_t>(id)];
        switch (vocab_.type(id)) {
            case TokenType::Normal:
                piece = spm ? replace_all(text, kSpmSpace, " ") : byte_map_.decode(text);
                break;
            case TokenType::UserDefined:
                piece = text;
                break;
            case TokenType::Byte:
                if (is_byte_token_text(text)) piece.assign(1, static_cast<char>(parse_byte_token(text)));
                break;
            default:  // control, unknown: rendered only on request; unused, undefined: never
                break;
        }
    }
    eog_.assign(static_cast<size_t>(n), false);
    eot_ = vocab_.eot();
    for (std::string_view name : kEogNames) {
        const int32_t id = vocab_.find(name);
        if (id == kNoToken) continue;
        eog_[static_cast<size_t>(id)] = true;
        if (eot_ == kNoToken) eot_ = id;
    }
    for (int32_t id : {vocab_.eos(), vocab_.eot(), vocab_.eom()}) {
        if (id != kNoToken) eog_[static_cast<size_t>(id)] = true;
    }
    if (vocab_.harmony()) {  // gpt-oss: <|end|> closes a message (the analysis), <|return|> or <|call|> the turn
        const int32_t end = vocab_.find("<|end|>");
        eog_[static_cast<size_t>(end)] = false;
        if (eot_ == end) eot_ = vocab_.find("<|return|>");
    }
}

// How many input bytes a token can stand for. The special splitter matches
// control, unknown and user-defined tokens by their literal text. Any other
// token matches escaped input: byte-level characters (one per input byte;
// decode() keeps unmapped characters as they are, so never undercounts) or
// SentencePiece text with spaces as the 3-byte U+2581. Invalid UTF-8 only
// grows (one U+FFFD per bad byte), and the stand-ins (<0xXX>, a one-byte
// token, unk) cover one byte each.
void Tokenizer::init_max_token_bytes() {
    // WordPiece's and Unigram's normalisers drop characters and their unknown
    // tokens stand for runs of input, so a token has no bound on the bytes it covers.
    if (wpm_ || ugm_ || (pre_ && !pre_->family().byte_level)) {
        max_token_bytes_ = 0;
        return;
    }
    size_t longest = 1;  // the byte a stand-in covers
    for (int32_t id = 0; id < vocab_.n_tokens(); ++id) {
        const std::string& text = vocab_.text(id);
        const TokenType t = vocab_.type(id);
        size_t covers = text.size();
        if (t != TokenType::Control && t != TokenType::Unknown && t != TokenType::UserDefined) {
            covers = spm_ ? replace_all(text, kSpmSpace, " ").size() : byte_map_.decode(text).size();
        }
        longest = std::max(longest, covers);
    }
    bool no_byte_dropped = true;
    for (int b = 0; b < 256 && no_byte_dropped; ++b) {
        const auto byte = static_cast<uint8_t>(b);
        no_byte_dropped = spm_ ? spm_->byte_token(byte) != kNoToken
                               : vocab_.unk() != kNoToken || vocab_.find(byte_map_.byte_text(byte)) != kNoToken;
    }
    max_token_bytes_ = no_byte_dropped ? longest : 0;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
    std::vector<int32_t> out;
    if (options.add_special && vocab_.add_bos() && vocab_.bos() != kNoToken) out.push_back(vocab_.bos());
    bool prev_was_special = true;  // SentencePiece prefixes a space at the start
    for (const Fragment& f : special_.split(vocab_, text, options.parse_special)) {
        if (f.token != kNoToken) {
            out.push_back(f.token);
            prev_was_special = true;
            continue;
        }
        encode_raw(text.substr(f.begin, f.size), prev_was_special, out);
        prev_was_special = false;
    }
    if (options.add_special && vocab_.add_eos() && vocab_.eos() != kNoToken) out.push_back(vocab_.eos());
    return out;
}

void Tokenizer::encode_raw(std::string_view raw, bool prev_was_special,
                           std::vector<int32_t>& out) const {
    if (ugm_) {  // normalises invalid UTF-8 itself, a U+FFFD per bad byte
        ugm_->encode(vocab_, raw, out);
        return;
    }
    if (spm_) {
        std::string text = (vocab_.add_space_prefix() && prev_was_special) ? " " : "";
        text.append(raw);
        spm_->encode(vocab_, replace_all(text, " ", kSpmSpace), out);
        return;
    }
    std::string repaired;
    if (!utf8_is_valid(raw)) {
        repaired = utf8_sanitize(raw);
        raw = repaired;
    }
    if (wpm_) {
        wpm_->encode(vocab_, raw, out);
        return;
    }
    TS_CHECK(pre_ && bpe_);
    if (!pre_->family().byte_level) {
        encode_raw_utf8_bpe(raw, out);
        return;
    }
    for (const Piece& p : pre_->split(raw)) {
        bpe_->encode_word(vocab_, byte_map_.encode(raw.substr(p.first, p.second)), out);
    }
}

// Gemma 4's BPE: spaces become U+2581, newline runs are cut off, and the
// words merge over raw UTF-8 (no byte-to-unicode mapping).
void Tokenizer::encode_raw_utf8_bpe(std::string_view raw, std::vector<int32_t>& out) const {
    const std::string text = replace_all(raw, " ", kSpmSpace);
    const PreFamily& family = pre_->family();
    for (const Piece& p : pre_->split(text)) {
        const std::string_view word = std::string_view(text).substr(p.first, p.second);
        if (family.whole_newline_runs && word.find_first_not_of('\n') == std::string_view::npos) {
            const int32_t id = vocab_.find(word);
            if (id != kNoToken) {
                out.push_back(id);
                continue;
            }
        }
        bpe_->encode_word(vocab_, word, out);
    }
}

const std::string& Tokenizer::token_to_piece(int32_t id, const DecodeOptions& options) const {
    if (id < 0 || id >= n_vocab()) return empty_;
    const TokenType t = vocab_.type(id);
    if (options.render_special && (t == TokenType::Control || t == TokenType::Unknown)) {
        return vocab_.text(id);
    }
    return pieces_[static_cast<size_t>(id)];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions& options) const {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
        std::string_view piece = token_to_piece(ids[i], options);
        if (i == 0 && vocab_.add_space_prefix() && !piece.empty() && piece[0] == ' ') {
            piece.remove_prefix(1);
        }
        out.append(piece);
    }
    return out;
}

bool Tokenizer::is_eog(int32_t id) const {
    return id >= 0 && id < n_vocab() && eog_[static_cast<size_t>(id)];
}

const std::string& Tokenizer::token_text(int32_t id) const {
    TS_CHECK(id >= 0 && id < n_vocab());
    return vocab_.text(id);
}

TokenType Tokenizer::token_type(int32_t id) const {
    TS_CHECK(id >= 0 && id < n_vocab());
    return vocab_.type(id);
}

}  // namespace tessera
