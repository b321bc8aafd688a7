// The disk tier's file format, as pure functions over bytes (so a fuzzer can
// drive them): one file per model identity, a 4 KiB header, then fixed-size
// record slots, each a 64-byte record header, the block's token run and the
// block's KV bytes, padded to 4 KiB. The file is untrusted input: every
// parse checks magic, version, sizes and checksums before anything is used.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cache/prefix_key.h"
#include "core/status.h"

namespace tessera {

// 2: Q8_0 K/V blocks hold Hadamard-rotated rows (kernels/kv_rotation.h), so
// version 1 files' blocks would be read wrongly.
inline constexpr uint32_t kTierFormatVersion = 2;
inline constexpr uint64_t kTierHeaderBytes = 4096;
inline constexpr uint64_t kRecordHeaderBytes = 64;
inline constexpr uint64_t kTierAlign = 4096;

// What every record of one tier file holds; fixed per (model, KV types, block size).
struct TierLayout {
    uint32_t block_size = 0;   // tokens per block
    uint64_t block_bytes = 0;  // KV bytes of one block, all layers
    // Record header + tokens + KV bytes, rounded up to kTierAlign; 0 when the
    // sizes are out of range (block_size 1..4096, block_bytes 1..1 GiB).
    uint64_t record_bytes() const;
    uint64_t payload_offset() const { return kRecordHeaderBytes + uint64_t{block_size} * 4; }
};

// Who wrote a tier: the model file's fingerprint mixed with the KV types and
// the layout (engine side). A file with another identity is foreign.
using TierIdentity = PrefixKey;

// The file header: kTierHeaderBytes bytes.
void encode_tier_header(const TierIdentity& id, const TierLayout& layout, std::span<uint8_t, kTierHeaderBytes> out);
// Checks a file header against what this process expects: the magic, the
// format version, a checksum, then the identity and the layout. The message
// says which differs.
Status check_tier_header(std::span<const uint8_t> bytes, const TierIdentity& id, const TierLayout& layout);

struct RecordHeader {
    PrefixKey key;
    uint64_t stamp = 0;     // write order: larger is newer (LRU after a restart)
    uint64_t checksum = 0;  // over the token run and the KV bytes
};

// The 64-byte record header for a block of `layout`.
void encode_record_header(const RecordHeader& h, const TierLayout& layout, std::span<uint8_t, kRecordHeaderBytes> out);
// Parses a record header: false for an empty slot, a bad magic or checksum,
// or sizes that are not `layout`'s.
bool parse_record_header(std::span<const uint8_t> bytes, const TierLayout& layout, RecordHeader& out);

// The checksum of a record's body: its token run and its KV bytes.
uint64_t record_checksum(std::span<const int32_t> run, std::span<const uint8_t> kv);

}  // namespace tessera
