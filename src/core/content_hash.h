// A fast 64-bit hash of bytes: checksums of the disk tier's records and the
// keys of its prefix chains (prefix_key.h). Not cryptographic: it catches
// corruption and spreads keys; it does not resist a chosen collision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tessera {

// Four independent multiply-rotate lanes over 32-byte stripes, then a tail
// and a final mix; `seed` makes independent hash functions.
uint64_t hash_bytes(std::span<const uint8_t> bytes, uint64_t seed = 0);

// hash_bytes over an int32 run's bytes.
uint64_t hash_tokens(std::span<const int32_t> tokens, uint64_t seed = 0);

}  // namespace tessera
