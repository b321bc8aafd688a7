// Special-token extraction (see special_split.h): each candidate token, longest
// first, cuts every raw fragment it occurs in into left / token / right.
#include "tokenizer/special_split.h"

#include <algorithm>

namespace tessera {

namespace {

bool is_special_type(TokenType t) {
    return t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined;
}

// Replaces each raw fragment of `in` that contains `needle` by its pieces.
void cut(std::string_view text, int32_t token, std::string_view needle,
         const std::vector<Fragment>& in, std::vector<Fragment>& out) {
    for (const Fragment& f : in) {
        if (f.token != kNoToken) {
            out.push_back(f);
            continue;
        }
        const std::string_view raw = text.substr(f.begin, f.size);
        size_t pos = 0;
        for (size_t hit = raw.find(needle); hit != std::string_view::npos;
             hit = raw.find(needle, pos)) {
            if (hit > pos) out.push_back({kNoToken, f.begin + pos, hit - pos});
            out.push_back({token, f.begin + hit, needle.size()});
            pos = hit + needle.size();
        }
        if (pos < raw.size()) out.push_back({kNoToken, f.begin + pos, raw.size() - pos});
    }
}

}  // namespace

SpecialSplitter::SpecialSplitter(const Vocab& vocab) {
    for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
        if (is_special_type(vocab.type(id)) && !vocab.text(id).empty()) candidates_.push_back(id);
    }
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](int32_t a, int32_t b) {
        return vocab.text(a).size() > vocab.text(b).size();
    });
}

std::vector<Fragment> SpecialSplitter::split(const Vocab& vocab, std::string_view text,
                                             bool parse_special) const {
    std::vector<Fragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({kNoToken, 0, text.size()});
    std::vector<Fragment> next;
    for (int32_t id : candidates_) {
        if (!parse_special && vocab.type(id) != TokenType::UserDefined) continue;
        const std::string& needle = vocab.text(id);
        // A token absent from the whole text is absent from every fragment.
        if (text.find(needle) == std::string_view::npos) continue;
        next.clear();
        cut(text, id, needle, fragments, next);
        fragments.swap(next);
    }
    return fragments;
}

}  // namespace tessera
