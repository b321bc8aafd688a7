// Score-ordered SentencePiece BPE (see spm.h). Symbols are contiguous byte
// ranges of the input, so the text of a candidate pair is a substring and the
// vocabulary lookup needs no allocation.
#include "tokenizer/spm.h"

#include <queue>

#include "tokenizer/utf8.h"

namespace tessera {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

struct Symbol {
    int32_t prev;
    int32_t next;
    size_t begin;
    size_t size;  // 0 once merged into its left neighbour
};

struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    size_t size;  // combined byte length when queued
    int32_t id;
};

// Highest score first; on ties, the leftmost pair.
struct WorseFirst {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

SpmModel::SpmModel(const Vocab& vocab) {
    for (int b = 0; b < 256; ++b) {
        const char name[] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
        int32_t id = vocab.find(std::string_view(name, sizeof(name)));
        if (id == kNoToken) {
            const char raw = static_cast<char>(b);
            id = vocab.find(std::string_view(&raw, 1));
        }
        byte_tokens_[static_cast<size_t>(b)] = id != kNoToken ? id : vocab.unk();
    }
}

void SpmModel::encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::vector<Symbol> symbols;
    for (size_t pos = 0; pos < text.size();) {
        // One symbol per valid character, one per invalid byte. (llama.cpp
        // trusts the lead byte's length, so an invalid byte can swallow the
        // escaped space after it and turn it into garbage bytes.)
        uint32_t cp = 0;
        size_t len = 1;
        if (!utf8_decode(text, pos, &cp, &len)) len = 1;
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({index - 1, index + 1, pos, len});
        pos += len;
    }
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, WorseFirst> queue;
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[static_cast<size_t>(left)];
        const Symbol& r = symbols[static_cast<size_t>(right)];
        const size_t size = l.size + r.size;
        const int32_t id = vocab.find(text.substr(l.begin, size));
        if (id != kNoToken) queue.push({vocab.score(id), left, right, size, id});
    };
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
        consider(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));
    }
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = symbols[static_cast<size_t>(c.left)];
        Symbol& r = symbols[static_cast<size_t>(c.right)];
        if (l.size == 0 || r.size == 0 || l.size + r.size != c.size) continue;  // stale
        l.size += r.size;
        r.size = 0;
        l.next = r.next;
        if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }
    for (int32_t i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
        const Symbol& s = symbols[static_cast<size_t>(i)];
        const std::string_view piece = text.substr(s.begin, s.size);
        const int32_t id = vocab.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
            continue;
        }
        for (char ch : piece) {
            const int32_t b = byte_tokens_[static_cast<uint8_t>(ch)];
            if (b != kNoToken) out.push_back(b);
        }
    }
}

}  // namespace tessera
