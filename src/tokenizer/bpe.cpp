// Rank-ordered BPE merging over a linked list of symbols (see bpe.h). Stale
// queue entries are detected by comparing the symbols' current token ids with
// the ids the entry was made from.
#include "tokenizer/bpe.h"

#include <queue>

#include "tokenizer/utf8.h"

namespace tessera {

namespace {

struct Symbol {
    int32_t prev;
    int32_t next;
    size_t begin;  // byte range in the word
    size_t size;   // 0 once merged into its left neighbour
    int32_t id;    // token id of the symbol's text, or kNoToken
};

struct Candidate {
    int32_t rank;
    int32_t left;  // symbol index
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t result;
};

// Lowest rank first; on ties, the leftmost pair.
struct LaterFirst {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

}  // namespace

Expected<BpeModel> BpeModel::create(const Vocab& vocab, bool ignore_merges, bool byte_fallback) {
    BpeModel m;
    m.ignore_merges_ = ignore_merges;
    m.byte_fallback_ = byte_fallback;
    for (int b = 0; b < 256; ++b) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        const char text[] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
        m.byte_tokens_[static_cast<size_t>(b)] = vocab.find(std::string_view(text, sizeof(text)));
    }
    const auto& merges = vocab.merges();
    m.merges_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        const std::string& text = merges[i];
        const size_t sp = text.find(' ', 1);  // Vocab::create checked the shape
        const int32_t left = vocab.find(std::string_view(text).substr(0, sp));
        const int32_t right = vocab.find(std::string_view(text).substr(sp + 1));
        const int32_t result = vocab.find(text.substr(0, sp) + text.substr(sp + 1));
        if (result == kNoToken) {
            return Status::error("tokenizer: merge " + std::to_string(i) + " ('" +
                                 text.substr(0, 64) + "') makes a string that is not a token");
        }
        // A repeated pair keeps its first (best) rank.
        m.merges_.emplace(key(left, right), Merge{static_cast<int32_t>(i), result});
    }
    return m;
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
    if (left == kNoToken || right == kNoToken) return nullptr;
    const auto it = merges_.find(key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::encode_word(const Vocab& vocab, std::string_view word,
                           std::vector<int32_t>& out) const {
    if (word.empty()) return;
    if (ignore_merges_) {
        const int32_t whole = vocab.find(word);
        if (whole != kNoToken) {
            out.push_back(whole);
            return;
        }
    }
    std::vector<Symbol> symbols;
    for (size_t pos = 0; pos < word.size();) {
        const size_t len = std::min(utf8_lead_length(static_cast<uint8_t>(word[pos])),
                                    word.size() - pos);
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({index - 1, index + 1, pos, len, vocab.find(word.substr(pos, len))});
        pos += len;
    }
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, LaterFirst> queue;
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[static_cast<size_t>(left)];
        const Symbol& r = symbols[static_cast<size_t>(right)];
        if (const Merge* m = find_merge(l.id, r.id)) {
            queue.push({m->rank, left, right, l.id, r.id, m->result});
        }
    };
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
        consider(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));
    }
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = symbols[static_cast<size_t>(c.left)];
        Symbol& r = symbols[static_cast<size_t>(c.right)];
        if (l.size == 0 || r.size == 0 || l.next != c.right || l.id != c.left_id ||
            r.id != c.right_id) {
            continue;  // one side changed since this pair was queued
        }
        l.size += r.size;
        l.id = c.result;
        r.size = 0;
        l.next = r.next;
        if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }
    for (int32_t i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
        const Symbol& s = symbols[static_cast<size_t>(i)];
        if (s.id != kNoToken) {
            out.push_back(s.id);
        } else if (byte_fallback_) {
            for (char c : word.substr(s.begin, s.size)) {
                const int32_t b = byte_tokens_[static_cast<uint8_t>(c)];
                if (b != kNoToken) out.push_back(b);
            }
        } else if (vocab.unk() != kNoToken) {
            // Only reachable with a vocabulary that lacks some byte characters.
            out.push_back(vocab.unk());
        }
    }
}

}  // namespace tessera
