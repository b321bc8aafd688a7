// Walks the precompiled charsmap's double array (see charsmap.h). Each entry
// packs: bits 0-7 the label the parent reached it by (LCHECK), bit 8 "has a
// leaf child", bits 10-30 the BASE offset (shifted left by 8 when bit 9 is
// set), and for a leaf, bits 0-30 the offset of its replacement string.
#include "tokenizer/charsmap.h"

namespace tessera {

namespace {

uint32_t read_u32_le(const std::string& s, size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(s[at])) |
           static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3])) << 24;
}

uint32_t base_of(uint32_t node) { return (node >> 10) << ((node & (1u << 9)) >> 6); }
uint32_t lcheck_of(uint32_t node) { return node & ((1u << 31) | 0xFFu); }
bool leaf_of(uint32_t node) { return ((node >> 8) & 1u) != 0; }
uint32_t value_of(uint32_t node) { return node & ((1u << 31) - 1); }

}  // namespace

Expected<CharsMap> CharsMap::create(std::string blob) {
    CharsMap m;
    if (blob.empty()) return m;
    if (blob.size() < 4) return Status::error("tokenizer: precompiled_charsmap is too small");
    const uint32_t array_bytes = read_u32_le(blob, 0);
    if (array_bytes % 4 != 0 || static_cast<uint64_t>(array_bytes) + 4 > blob.size()) {
        return Status::error("tokenizer: precompiled_charsmap's array size does not fit the charsmap");
    }
    m.n_entries_ = array_bytes / 4;
    m.strings_offset_ = 4 + static_cast<size_t>(array_bytes);
    m.blob_ = std::move(blob);
    return m;
}

uint32_t CharsMap::entry(size_t index, bool* ok) const {
    if (index >= n_entries_) {
        *ok = false;
        return 0;
    }
    return read_u32_le(blob_, 4 + index * 4);
}

CharsMap::Match CharsMap::longest_prefix(std::string_view text) const {
    Match best;
    if (n_entries_ == 0) return best;
    bool ok = true;
    size_t best_value = 0;
    size_t node = base_of(entry(0, &ok));
    for (size_t i = 0; i < text.size() && ok; ++i) {
        const auto c = static_cast<uint8_t>(text[i]);
        if (c == 0) break;
        node ^= c;
        const uint32_t here = entry(node, &ok);
        if (!ok || lcheck_of(here) != c) break;
        const bool leaf = leaf_of(here);
        node ^= base_of(here);
        if (leaf) {
            const uint32_t value_node = entry(node, &ok);
            if (!ok) break;
            best.consumed = i + 1;
            best_value = value_of(value_node);
        }
    }
    if (best.consumed == 0) return best;
    // The replacement runs to its NUL; one without a NUL is no match.
    const size_t start = strings_offset_ + best_value;
    const size_t end = start < blob_.size() ? blob_.find('\0', start) : std::string::npos;
    if (end == std::string::npos) return {};
    best.replacement = std::string_view(blob_).substr(start, end - start);
    return best;
}

}  // namespace tessera
