// Unigram encoder (see unigram.h).
#include "tokenizer/unigram.h"

#include <algorithm>
#include <limits>

#include "tokenizer/utf8.h"

namespace tessera {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581
constexpr double kUnknownPenalty = 10.0;

// One normalisation step at the start of `rest`: the bytes consumed and what
// they become.
struct Step {
    size_t consumed;
    std::string_view out;
};

}  // namespace

Expected<UnigramModel> UnigramModel::create(const Vocab& vocab) {
    UnigramModel m;
    auto map = CharsMap::create(vocab.charsmap());
    if (!map) return map.status();
    m.charsmap_ = std::move(*map);
    double min_score = std::numeric_limits<double>::max();
    for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
        if (vocab.type(id) == TokenType::Normal) min_score = std::min(min_score, static_cast<double>(vocab.score(id)));
        if (m.matchable(vocab, id) && !vocab.text(id).empty()) m.by_text_.push_back(id);
    }
    std::stable_sort(m.by_text_.begin(), m.by_text_.end(),
                     [&](int32_t a, int32_t b) { return vocab.text(a) < vocab.text(b); });
    if (min_score == std::numeric_limits<double>::max()) min_score = 0;
    m.unknown_score_ = min_score - kUnknownPenalty;
    return m;
}

bool UnigramModel::matchable(const Vocab& vocab, int32_t id) const {
    const TokenType t = vocab.type(id);
    return t == TokenType::Normal || t == TokenType::UserDefined || t == TokenType::Unused;
}

std::string UnigramModel::normalize(const Vocab& vocab, std::string_view text) const {
    const bool merge_spaces = vocab.remove_extra_whitespaces();
    const bool prepend = vocab.add_space_prefix();
    std::string out;
    out.reserve(text.size() * 3);
    bool prepended = false;
    bool in_word = false;
    for (size_t pos = 0; pos < text.size();) {
        const std::string_view rest = text.substr(pos);
        Step step{0, {}};
        const CharsMap::Match m = charsmap_.longest_prefix(rest);
        if (m.consumed > 0) step = {m.consumed, m.replacement};
        if (step.consumed == 0) {
            uint32_t cp = 0;
            size_t len = 0;
            step = utf8_decode(text, pos, &cp, &len) ? Step{len, rest.substr(0, len)} : Step{1, kReplacementChar};
        }
        for (char c : step.out) {
            if (c != ' ') {
                if (!in_word) {
                    in_word = true;
                    if ((prepend && !prepended) || merge_spaces) {
                        out += kSpace;
                        prepended = true;
                    }
                }
                out += c;
            } else {
                in_word = false;
                if (!merge_spaces) out += kSpace;
            }
        }
        pos += step.consumed;
    }
    return out;
}

template <typename Found>
void UnigramModel::each_prefix_token(const Vocab& vocab, std::string_view text, Found&& found) const {
    // [lo, hi): the tokens whose first `len` bytes equal text's; sorted order
    // puts the one of exactly `len` bytes (if any) first.
    auto lo = by_text_.begin();
    auto hi = by_text_.end();
    for (size_t len = 1; len <= text.size() && lo != hi; ++len) {
        const auto c = static_cast<uint8_t>(text[len - 1]);
        auto byte_at = [&](int32_t id) { return static_cast<uint8_t>(vocab.text(id)[len - 1]); };
        lo = std::partition_point(lo, hi, [&](int32_t id) { return vocab.text(id).size() < len || byte_at(id) < c; });
        hi = std::partition_point(lo, hi, [&](int32_t id) { return byte_at(id) == c; });
        // Equal texts sit together; the last of them is the one the vocabulary's lookup gives.
        auto exact = lo;
        while (exact != hi && vocab.text(*exact).size() == len && std::next(exact) != hi &&
               vocab.text(*std::next(exact)).size() == len) {
            ++exact;
        }
        if (lo != hi && vocab.text(*exact).size() == len) found(*exact, len);
    }
}

void UnigramModel::encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const {
    const std::string s = normalize(vocab, text);
    const size_t n = s.size();
    if (n == 0) return;
    struct Best {
        int32_t token;
        size_t from;
        double score;
    };
    std::vector<Best> best(n + 1, {vocab.unk(), 0, -std::numeric_limits<double>::max()});
    best[0].score = 0;
    for (size_t at = 0; at < n;) {
        const size_t char_len = std::min(utf8_lead_length(static_cast<uint8_t>(s[at])), n - at);
        bool whole_char_token = false;
        // Shorter tokens first, a later one winning only with a strictly higher
        // score: the tie-breaking of SentencePiece's trie walk.
        each_prefix_token(vocab, std::string_view(s).substr(at), [&](int32_t id, size_t len) {
            if (len == char_len) whole_char_token = true;
            // User-defined tokens score 0, above every (log-probability) score.
            const double score = best[at].score +
                                 (vocab.type(id) == TokenType::UserDefined ? 0.0 : static_cast<double>(vocab.score(id)));
            if (score > best[at + len].score) best[at + len] = {id, at, score};
        });
        if (!whole_char_token) {
            const double score = best[at].score + unknown_score_;
            if (score > best[at + char_len].score) best[at + char_len] = {vocab.unk(), at, score};
        }
        at += char_len;
    }
    // Back from the end; consecutive unknown tokens become one.
    const size_t first = out.size();
    bool prev_unknown = false;
    for (size_t at = n;;) {
        const Best& b = best[at];
        const bool unknown = b.token == vocab.unk();
        if (!(prev_unknown && unknown) && b.token != kNoToken) out.push_back(b.token);
        if (b.from == 0) break;
        prev_unknown = unknown;
        at = b.from;
    }
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

}  // namespace tessera
