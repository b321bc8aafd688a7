// ICU-backed Unicode helpers (see unicode_props.h).
#include "tokenizer/unicode_props.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "tokenizer/utf8.h"

namespace tessera {

std::vector<uint32_t> utf8_code_points(std::string_view text) {
    std::vector<uint32_t> cps;
    cps.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = 0;
        size_t len = 1;
        if (!utf8_decode(text, pos, &cp, &len)) cp = 0xFFFD;  // unreachable for valid input
        cps.push_back(cp);
        pos += len;
    }
    return cps;
}

std::string nfd(std::string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* norm = icu::Normalizer2::getNFDInstance(status);
    if (U_FAILURE(status)) return std::string(text);  // no ICU data: text as it is
    const auto src = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    const icu::UnicodeString out = norm->normalize(src, status);
    if (U_FAILURE(status)) return std::string(text);
    std::string utf8;
    out.toUTF8String(utf8);
    return utf8;
}

namespace {
uint32_t category_mask(uint32_t cp) { return U_GET_GC_MASK(static_cast<UChar32>(cp)); }
}  // namespace

bool is_unicode_whitespace(uint32_t cp) { return u_isUWhiteSpace(static_cast<UChar32>(cp)) != 0; }
// Unassigned code points are kept, as Hugging Face's BertNormalizer keeps them.
bool is_control_char(uint32_t cp) {
    return (category_mask(cp) & (U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK | U_GC_CS_MASK)) != 0;
}
bool is_punctuation_char(uint32_t cp) { return (category_mask(cp) & U_GC_P_MASK) != 0; }
bool is_symbol_char(uint32_t cp) { return (category_mask(cp) & U_GC_S_MASK) != 0; }
bool is_nonspacing_mark(uint32_t cp) { return (category_mask(cp) & U_GC_MN_MASK) != 0; }
uint32_t simple_lowercase(uint32_t cp) { return static_cast<uint32_t>(u_tolower(static_cast<UChar32>(cp))); }

}  // namespace tessera
