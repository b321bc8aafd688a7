// prefix_key: two independently seeded 64-bit hashes of (parent key, run).
#include "cache/prefix_key.h"

#include "core/content_hash.h"

namespace tessera {
namespace {

constexpr uint64_t kSeedHi = 0x5445535345524B31ull;  // "TESSERK1"
constexpr uint64_t kSeedLo = 0x7C15A3D1E2F40B69ull;

uint64_t chain_half(const PrefixKey& parent, std::span<const int32_t> run, uint64_t seed) {
    const uint64_t parent_hash = hash_bytes(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&parent), sizeof(parent)), seed);
    return hash_tokens(run, parent_hash);
}

}  // namespace

PrefixKey prefix_root_key(uint64_t salt) {
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(&salt), sizeof(salt));
    return PrefixKey{hash_bytes(bytes, kSeedHi), hash_bytes(bytes, kSeedLo)};
}

PrefixKey prefix_chain_key(const PrefixKey& parent, std::span<const int32_t> run) {
    return PrefixKey{chain_half(parent, run, kSeedHi), chain_half(parent, run, kSeedLo)};
}

}  // namespace tessera
