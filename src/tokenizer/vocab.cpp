// Validation and lookup for Vocab (see vocab.h). Every check here guards an
// index the encoders use later without re-checking.
#include "tokenizer/vocab.h"

#include <limits>

namespace tessera {

bool is_byte_token_text(std::string_view t) {
    auto hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
    };
    return t.size() == 6 && t.substr(0, 3) == "<0x" && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

namespace {

Status check_id(const char* name, int64_t id, size_t n_tokens) {
    if (id == kNoToken) return ok_status();
    if (id < 0 || static_cast<uint64_t>(id) >= n_tokens) {
        return Status::error(std::string("tokenizer: ") + name + " token id " + std::to_string(id) +
                             " is outside the vocabulary of " + std::to_string(n_tokens) +
                             " tokens");
    }
    return ok_status();
}

Status check_types(const VocabSpec& s) {
    if (!s.types.empty() && s.types.size() != s.tokens.size()) {
        return Status::error("tokenizer: token_type has " + std::to_string(s.types.size()) +
                             " entries for " + std::to_string(s.tokens.size()) + " tokens");
    }
    for (size_t i = 0; i < s.types.size(); ++i) {
        const int32_t t = s.types[i];
        if (t < 0 || t > static_cast<int32_t>(TokenType::Byte)) {
            return Status::error("tokenizer: token " + std::to_string(i) + " has unknown type " +
                                 std::to_string(t));
        }
        if (s.kind == VocabKind::Spm && t == static_cast<int32_t>(TokenType::Byte) &&
            !is_byte_token_text(s.tokens[i])) {
            return Status::error("tokenizer: byte token " + std::to_string(i) +
                                 " is not of the form <0xXX>");
        }
    }
    return ok_status();
}

}  // namespace

Expected<Vocab> Vocab::create(VocabSpec spec) {
    Vocab v;
    v.spec_ = std::move(spec);
    TS_RETURN_IF_ERROR(v.validate_and_index());
    return v;
}

Status Vocab::validate_and_index() {
    const VocabSpec& s = spec_;
    const size_t n = s.tokens.size();
    if (n == 0) return Status::error("tokenizer: the vocabulary is empty");
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
        return Status::error("tokenizer: the vocabulary is too large");
    }
    if (!s.scores.empty() && s.scores.size() != n) {
        return Status::error("tokenizer: scores has " + std::to_string(s.scores.size()) +
                             " entries for " + std::to_string(n) + " tokens");
    }
    TS_RETURN_IF_ERROR(check_types(s));
    TS_RETURN_IF_ERROR(check_id("bos", s.bos, n));
    TS_RETURN_IF_ERROR(check_id("eos", s.eos, n));
    TS_RETURN_IF_ERROR(check_id("eot", s.eot, n));
    TS_RETURN_IF_ERROR(check_id("eom", s.eom, n));
    TS_RETURN_IF_ERROR(check_id("unknown", s.unk, n));
    TS_RETURN_IF_ERROR(check_id("padding", s.pad, n));
    if (s.kind == VocabKind::Bpe && s.merges.empty()) {
        return Status::error("tokenizer: a gpt2 (BPE) vocabulary needs tokenizer.ggml.merges");
    }
    text_to_id_.reserve(n);
    for (size_t i = 0; i < n; ++i) text_to_id_[s.tokens[i]] = static_cast<int32_t>(i);
    // Each merge is "left right" (split at the first space after the first
    // byte, as llama.cpp does) and both halves must be tokens.
    for (size_t i = 0; i < s.merges.size(); ++i) {
        const std::string& m = s.merges[i];
        const size_t sp = m.find(' ', 1);
        if (sp == std::string::npos || sp + 1 >= m.size() || find(m.substr(0, sp)) == kNoToken ||
            find(std::string_view(m).substr(sp + 1)) == kNoToken) {
            return Status::error("tokenizer: merge " + std::to_string(i) + " ('" + m.substr(0, 64) +
                                 "') does not name two known tokens");
        }
    }
    mark_harmony_tokens();
    return ok_status();
}

// As llama.cpp loads any vocabulary: the tokens that frame a harmony message
// (and, in a harmony vocabulary, <|end|>) are user-defined rather than
// control tokens, so generated text keeps them and the chat layer can find
// its channels and tool calls (template/tool_calls.h).
void Vocab::mark_harmony_tokens() {
    harmony_ = find("<|return|>") != kNoToken && find("<|call|>") != kNoToken && find("<|end|>") != kNoToken;
    if (spec_.types.empty()) return;  // all normal already
    for (std::string_view name : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
        if (const int32_t id = find(name); id != kNoToken) {
            spec_.types[static_cast<size_t>(id)] = static_cast<int32_t>(TokenType::UserDefined);
        }
    }
    if (harmony_) spec_.types[static_cast<size_t>(find("<|end|>"))] = static_cast<int32_t>(TokenType::UserDefined);
}

float Vocab::score(int32_t id) const {
    return spec_.scores.empty() ? 0.0f : spec_.scores[static_cast<size_t>(id)];
}

TokenType Vocab::type(int32_t id) const {
    return spec_.types.empty() ? TokenType::Normal
                               : static_cast<TokenType>(spec_.types[static_cast<size_t>(id)]);
}

int32_t Vocab::find(std::string_view text) const {
    const auto it = text_to_id_.find(text);
    return it == text_to_id_.end() ? kNoToken : it->second;
}

}  // namespace tessera
