// Forced continuations: a byte walk of the matcher, then a longest-first
// split over the sorted vocabulary.
#include "grammar/forced.h"

#include <algorithm>
#include <bit>

namespace tessera {
namespace {

// The one byte in `set`, or -1 when it holds none or several.
int only_byte(const ByteSet& set) {
    int count = 0;
    int found = -1;
    for (size_t w = 0; w < set.bits.size(); ++w) {
        count += std::popcount(set.bits[w]);
        if (set.bits[w] != 0) found = static_cast<int>(w * 64) + std::countr_zero(set.bits[w]);
    }
    return count == 1 ? found : -1;
}

}  // namespace

std::string forced_bytes(GrammarMatcher& matcher, size_t max_bytes) {
    std::string out;
    while (out.size() < max_bytes && !matcher.accepting()) {
        const int b = only_byte(matcher.allowed_bytes());
        if (b < 0 || !matcher.advance(static_cast<uint8_t>(b))) break;
        out.push_back(static_cast<char>(b));
    }
    matcher.rollback(out.size());
    return out;
}

std::vector<int32_t> split_longest_first(const TokenVocabulary& vocab, std::string_view bytes, size_t max_tokens) {
    const auto& sorted = vocab.sorted();
    const auto token_less = [&](int32_t id, std::string_view key) { return vocab.bytes(id) < key; };
    std::vector<int32_t> out;
    size_t pos = 0;
    while (pos < bytes.size() && out.size() < max_tokens) {
        const std::string_view rest = bytes.substr(pos);
        int32_t best = -1;
        for (size_t len = std::min(rest.size(), vocab.max_token_bytes()); len > 0 && best < 0; --len) {
            const std::string_view key = rest.substr(0, len);
            const auto it = std::lower_bound(sorted.begin(), sorted.end(), key, token_less);
            if (it != sorted.end() && vocab.bytes(*it) == key) best = *it;
        }
        if (best < 0) break;
        out.push_back(best);
        pos += vocab.bytes(best).size();
    }
    return out;
}

}  // namespace tessera
