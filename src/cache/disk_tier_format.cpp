// disk_tier_format: little-endian fields at fixed offsets, each header closed
// by a checksum over the bytes before it. Sizes are checked before they are
// multiplied, so a hostile header cannot overflow a computation.
#include "cache/disk_tier_format.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/content_hash.h"

namespace tessera {
namespace {

static_assert(std::endian::native == std::endian::little, "the tier format is little-endian");

constexpr char kFileMagic[8] = {'T', 'E', 'S', 'S', 'K', 'V', 'T', 'R'};
constexpr uint32_t kRecordMagic = 0x424B5654;  // "TVKB"
constexpr uint64_t kFileChecksumAt = 56;       // header checksum over [0, 56)
constexpr uint64_t kRecordChecksumAt = 48;     // record header checksum over [0, 48)
constexpr uint64_t kHeaderSeed = 0x68656164;
constexpr uint64_t kMaxBlockSize = 4096;
constexpr uint64_t kMaxBlockBytes = uint64_t{1} << 30;

template <class T>
void put(uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof(T));
}

template <class T>
T get(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

uint64_t header_checksum(const uint8_t* p, uint64_t n) { return hash_bytes(std::span<const uint8_t>(p, n), kHeaderSeed); }

bool layout_ok(const TierLayout& l) {
    return l.block_size >= 1 && l.block_size <= kMaxBlockSize && l.block_bytes >= 1 && l.block_bytes <= kMaxBlockBytes;
}

}  // namespace

uint64_t TierLayout::record_bytes() const {
    if (!layout_ok(*this)) return 0;
    const uint64_t raw = payload_offset() + block_bytes;
    return (raw + kTierAlign - 1) / kTierAlign * kTierAlign;
}

void encode_tier_header(const TierIdentity& id, const TierLayout& layout, std::span<uint8_t, kTierHeaderBytes> out) {
    uint8_t* p = out.data();
    std::fill(out.begin(), out.end(), uint8_t{0});
    std::memcpy(p, kFileMagic, 8);
    put<uint32_t>(p + 8, kTierFormatVersion);
    put<uint32_t>(p + 12, layout.block_size);
    put<uint64_t>(p + 16, id.hi);
    put<uint64_t>(p + 24, id.lo);
    put<uint64_t>(p + 32, layout.block_bytes);
    put<uint64_t>(p + 40, layout.record_bytes());
    put<uint64_t>(p + kFileChecksumAt, header_checksum(p, kFileChecksumAt));
}

Status check_tier_header(std::span<const uint8_t> bytes, const TierIdentity& id, const TierLayout& layout) {
    if (bytes.size() < kTierHeaderBytes) return Status::error("the file is shorter than a tier header");
    const uint8_t* p = bytes.data();
    if (std::memcmp(p, kFileMagic, 8) != 0) return Status::error("not a tessera KV tier file (bad magic)");
    if (get<uint32_t>(p + 8) != kTierFormatVersion) {
        return Status::error("tier format version " + std::to_string(get<uint32_t>(p + 8)) + ", expected " +
                             std::to_string(kTierFormatVersion));
    }
    if (get<uint64_t>(p + kFileChecksumAt) != header_checksum(p, kFileChecksumAt)) {
        return Status::error("the tier header's checksum does not match");
    }
    if (get<uint64_t>(p + 16) != id.hi || get<uint64_t>(p + 24) != id.lo) {
        return Status::error("the tier was written for another model, KV type or block size");
    }
    if (get<uint32_t>(p + 12) != layout.block_size || get<uint64_t>(p + 32) != layout.block_bytes ||
        get<uint64_t>(p + 40) != layout.record_bytes()) {
        return Status::error("the tier's block layout differs");
    }
    return ok_status();
}

void encode_record_header(const RecordHeader& h, const TierLayout& layout, std::span<uint8_t, kRecordHeaderBytes> out) {
    uint8_t* p = out.data();
    std::fill(out.begin(), out.end(), uint8_t{0});
    put<uint32_t>(p, kRecordMagic);
    put<uint32_t>(p + 4, layout.block_size);
    put<uint64_t>(p + 8, h.key.hi);
    put<uint64_t>(p + 16, h.key.lo);
    put<uint64_t>(p + 24, h.stamp);
    put<uint64_t>(p + 32, layout.block_bytes);
    put<uint64_t>(p + 40, h.checksum);
    put<uint64_t>(p + kRecordChecksumAt, header_checksum(p, kRecordChecksumAt));
}

bool parse_record_header(std::span<const uint8_t> bytes, const TierLayout& layout, RecordHeader& out) {
    if (bytes.size() < kRecordHeaderBytes) return false;
    const uint8_t* p = bytes.data();
    if (get<uint32_t>(p) != kRecordMagic) return false;
    if (get<uint64_t>(p + kRecordChecksumAt) != header_checksum(p, kRecordChecksumAt)) return false;
    if (get<uint32_t>(p + 4) != layout.block_size || get<uint64_t>(p + 32) != layout.block_bytes) return false;
    out.key = PrefixKey{get<uint64_t>(p + 8), get<uint64_t>(p + 16)};
    out.stamp = get<uint64_t>(p + 24);
    out.checksum = get<uint64_t>(p + 40);
    return true;
}

uint64_t record_checksum(std::span<const int32_t> run, std::span<const uint8_t> kv) {
    return hash_bytes(kv, hash_tokens(run, 0x626F6479));
}

}  // namespace tessera
