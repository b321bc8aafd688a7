// The GPT-2 byte-to-unicode mapping used by byte-level BPE vocabularies: each
// of the 256 byte values is shown as a printable code point (space -> U+0120
// 'Ġ', newline -> U+010A 'Ċ'), so token texts are valid UTF-8 strings.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tessera {

class ByteLevelMap {
public:
    ByteLevelMap();

    // Bytes -> mapped text (every input byte becomes one code point).
    std::string encode(std::string_view bytes) const;
    // Mapped text -> bytes. A code point outside the mapping (only possible in
    // a malformed token text) is copied through unchanged.
    std::string decode(std::string_view text) const;
    // The mapped character for one byte, as UTF-8.
    const std::string& byte_text(uint8_t byte) const { return byte_text_[byte]; }

private:
    std::array<std::string, 256> byte_text_;
    std::unordered_map<uint32_t, uint8_t> cp_to_byte_;
};

}  // namespace tessera
