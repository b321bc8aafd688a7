// WordPiece encoder (see wordpiece.h).
#include "tokenizer/wordpiece.h"

#include <algorithm>

#include "tokenizer/unicode_props.h"
#include "tokenizer/utf8.h"

namespace tessera {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581

// BERT's "Chinese character" blocks: CJK ideographs, each its own word.
bool is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) ||
           (cp >= 0x2B920 && cp <= 0x2CEAF) ||  // HF's bound (0x2B820 in Unicode), kept to agree with it
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace

WordPieceModel::WordPieceModel(const Vocab& vocab) {
    for (int32_t id = 0; id < vocab.n_tokens(); ++id) max_token_len_ = std::max(max_token_len_, vocab.text(id).size());
}

std::vector<std::string> WordPieceModel::words(const Vocab& vocab, std::string_view text) const {
    const bool strip = vocab.strip_accents();
    const std::string decomposed = strip ? nfd(text) : std::string();
    std::vector<std::string> words(1);
    for (uint32_t cp : utf8_code_points(strip ? std::string_view(decomposed) : text)) {
        // Control characters go first, as in Hugging Face's BertNormalizer:
        // \f, \v and U+0085 are removed, not word breaks (llama.cpp breaks
        // words at them; the model's own tokenizer does not).
        const bool tab_or_newline = cp == '\t' || cp == '\n' || cp == '\r';
        if (cp == 0 || cp == 0xFFFD || (!tab_or_newline && is_control_char(cp))) continue;
        if (is_unicode_whitespace(cp)) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        if (strip && is_nonspacing_mark(cp)) continue;
        std::string ch;
        utf8_append(ch, vocab.lowercase() ? simple_lowercase(cp) : cp);
        if (is_punctuation_char(cp) || (cp < 0x7F && is_symbol_char(cp)) || is_cjk_ideograph(cp)) {
            if (!words.back().empty()) words.emplace_back();
            words.back() = std::move(ch);
            words.emplace_back();
        } else {
            words.back() += ch;
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

void WordPieceModel::encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const {
    for (const std::string& word : words(vocab, text)) {
        const std::string w = std::string(kWordStart) + word;
        const size_t start = out.size();
        // Greedy longest match from the left; a cut may fall inside a UTF-8
        // sequence only where a token's text does, so no valid token is missed.
        for (size_t i = 0; i < w.size();) {
            size_t j = std::min(w.size(), i + max_token_len_);
            int32_t id = kNoToken;
            for (; j > i; --j) {
                id = vocab.find(std::string_view(w).substr(i, j - i));
                if (id != kNoToken) break;
            }
            if (id == kNoToken) {
                out.resize(start);
                break;
            }
            out.push_back(id);
            i = j;
        }
        if (out.size() == start && vocab.unk() != kNoToken) out.push_back(vocab.unk());
    }
}

}  // namespace tessera
