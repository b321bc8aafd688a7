// Builds the GPT-2 byte <-> code point tables (see byte_level.h) and converts
// whole strings in both directions.
#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace tessera {

namespace {

// Bytes that GPT-2 shows as themselves: printable Latin-1 except the
// soft hyphen. Every other byte is shown as U+0100 + k, in byte order.
bool maps_to_itself(int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

}  // namespace

ByteLevelMap::ByteLevelMap() {
    uint32_t next_extra = 256;
    for (int b = 0; b < 256; ++b) {
        const uint32_t cp = maps_to_itself(b) ? static_cast<uint32_t>(b) : next_extra++;
        utf8_append(byte_text_[b], cp);
        cp_to_byte_[cp] = static_cast<uint8_t>(b);
    }
}

std::string ByteLevelMap::encode(std::string_view bytes) const {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) out += byte_text_[static_cast<uint8_t>(c)];
    return out;
}

std::string ByteLevelMap::decode(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        uint32_t cp = 0;
        size_t len = 0;
        if (!utf8_decode(text, pos, &cp, &len)) {
            out.push_back(text[pos]);
            pos += 1;
            continue;
        }
        const auto it = cp_to_byte_.find(cp);
        if (it != cp_to_byte_.end()) {
            out.push_back(static_cast<char>(it->second));
        } else {
            out.append(text.substr(pos, len));
        }
        pos += len;
    }
    return out;
}

}  // namespace tessera
