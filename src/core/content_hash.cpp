// content_hash: 64-bit lanes, each round x = rotl(x + word * P2, 31) * P1, so
// four words are in flight per stripe and a checksum runs at memory speed.
#include "core/content_hash.h"

#include <bit>
#include <cstring>

namespace tessera {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;

uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

uint64_t round(uint64_t acc, uint64_t word) { return std::rotl(acc + word * kP2, 31) * kP1; }

uint64_t avalanche(uint64_t h) {
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

}  // namespace

uint64_t hash_bytes(std::span<const uint8_t> bytes, uint64_t seed) {
    const uint8_t* p = bytes.data();
    size_t n = bytes.size();
    uint64_t lanes[4] = {seed + kP1 + kP2, seed + kP2, seed, seed - kP1};
    for (; n >= 32; n -= 32, p += 32) {
        for (int i = 0; i < 4; ++i) lanes[i] = round(lanes[i], load64(p + 8 * i));
    }
    uint64_t h = std::rotl(lanes[0], 1) + std::rotl(lanes[1], 7) + std::rotl(lanes[2], 12) + std::rotl(lanes[3], 18);
    h = (h ^ round(0, bytes.size())) * kP1 + kP3;
    for (; n >= 8; n -= 8, p += 8) h = std::rotl(h ^ round(0, load64(p)), 27) * kP1 + kP3;
    for (; n > 0; --n, ++p) h = std::rotl(h ^ (*p * kP3), 11) * kP1;
    return avalanche(h);
}

uint64_t hash_tokens(std::span<const int32_t> tokens, uint64_t seed) {
    return hash_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(tokens.data()), tokens.size_bytes()),
                      seed);
}

}  // namespace tessera
