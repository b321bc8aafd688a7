// PCRE2-backed pre-tokenizer (see pre_tokenizer.h); the pattern chains per
// tokenizer.ggml.pre value live in pre_families.cpp.
#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

#include "core/check.h"
#include "tokenizer/pre_families.h"
#include "tokenizer/utf8.h"

namespace tessera {

namespace {

// Unicode White_Space, which llama.cpp and Hugging Face use for \s. PCRE2's
// own \s under UCP leaves out U+0085, so patterns spell the class out.
constexpr std::string_view kWhitespaceClass =
    "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}";

// Rewrites \s and \S (outside or inside a character class) to kWhitespaceClass.
std::string expand_whitespace(std::string_view pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[i + 1];
            ++i;
            if (e == 's') {
                out += in_class ? std::string(kWhitespaceClass)
                                : "[" + std::string(kWhitespaceClass) + "]";
            } else if (e == 'S') {
                TS_CHECK_MSG(!in_class, "\\S inside a character class is not supported");
                out += "[^" + std::string(kWhitespaceClass) + "]";
            } else {
                out += c;
                out += e;
            }
            continue;
        }
        if (c == '[' && !in_class) in_class = true;
        else if (c == ']' && in_class) in_class = false;
        out += c;
    }
    return out;
}

}  // namespace

void MatchScratch::Deleter::operator()(void* data) const {
    pcre2_match_data_free(static_cast<pcre2_match_data*>(data));
}

MatchScratch::MatchScratch() : data_(pcre2_match_data_create(1, nullptr)) {
    TS_CHECK(data_ != nullptr);
}

void CompiledRegex::Deleter::operator()(void* code) const {
    pcre2_code_free(static_cast<pcre2_code*>(code));
}

Expected<CompiledRegex> CompiledRegex::compile(const std::string& pattern) {
    const std::string expanded = expand_whitespace(pattern);
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expanded.data()),
                                     expanded.size(), PCRE2_UTF | PCRE2_UCP, &error, &offset,
                                     nullptr);
    if (code == nullptr) {
        std::array<PCRE2_UCHAR, 256> message{};
        pcre2_get_error_message(error, message.data(), message.size());
        return Status::error("tokenizer: cannot compile pattern '" + pattern + "' at offset " +
                             std::to_string(offset) + ": " +
                             reinterpret_cast<const char*>(message.data()));
    }
    // JIT is an optimisation: when it is unavailable pcre2_match interprets.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    CompiledRegex r;
    r.code_.reset(code);
    return r;
}

void CompiledRegex::split(std::string_view text, Piece range, MatchScratch& scratch,
                          std::vector<Piece>& out) const {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + range.first);
    const size_t length = range.second;
    auto* md = static_cast<pcre2_match_data*>(scratch.get());
    auto* code = static_cast<const pcre2_code*>(code_.get());
    size_t pos = 0;   // next byte to search from
    size_t done = 0;  // bytes already emitted
    while (pos < length) {
        const int rc = pcre2_match(code, subject, length, pos, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0) break;  // no match (or a resource limit): the rest is one gap
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t m_begin = ov[0];
        const size_t m_end = ov[1];
        if (m_end == m_begin) {
            // An empty match (a lookahead-only pattern such as SuperBPE's
            // digit grouping) cuts the text there, as Hugging Face's Split and
            // llama.cpp do; then the search steps over one character.
            if (m_begin >= length) break;
            if (m_begin > done) out.emplace_back(range.first + done, m_begin - done);
            done = m_begin;
            pos = m_begin + utf8_lead_length(static_cast<uint8_t>(subject[m_begin]));
            continue;
        }
        if (m_begin > done) out.emplace_back(range.first + done, m_begin - done);
        out.emplace_back(range.first + m_begin, m_end - m_begin);
        done = pos = m_end;
    }
    if (done < length) out.emplace_back(range.first + done, length - done);
}

Expected<PreTokenizer> PreTokenizer::create(std::string_view pre) {
    const PreFamily* family = find_pre_family(pre);
    if (family == nullptr) {
        return Status::error("tokenizer: unknown pre-tokenizer tokenizer.ggml.pre = '" +
                             std::string(pre) + "'");
    }
    PreTokenizer p;
    p.family_ = family;
    for (std::string_view pattern : family->chain) {
        auto r = CompiledRegex::compile(std::string(pattern));
        if (!r) return r.status();
        p.chain_.push_back(std::move(*r));
    }
    return p;
}

std::vector<Piece> PreTokenizer::split(std::string_view text) const {
    std::vector<Piece> pieces;
    if (text.empty()) return pieces;
    pieces.emplace_back(0, text.size());
    MatchScratch scratch;
    std::vector<Piece> next;
    for (const CompiledRegex& r : chain_) {
        next.clear();
        for (const Piece& p : pieces) r.split(text, p, scratch, next);
        pieces.swap(next);
    }
    return pieces;
}

}  // namespace tessera
