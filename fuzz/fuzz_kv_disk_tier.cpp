// libFuzzer target: arbitrary bytes as a KV disk tier file. Input byte 0
// chooses whether the rest is the whole file or the records after a valid
// header (so mutations reach the record parser and the index rebuild);
// then the tier is opened from it and every record it indexed is loaded.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "cache/disk_tier.h"

namespace {

constexpr tessera::TierLayout kLayout{2, 24};
constexpr tessera::TierIdentity kId{0x1234, 0x5678};
constexpr uint64_t kSlots = 4;

const std::string& tier_dir() {
    static const std::string dir = [] {
        std::string d = (std::filesystem::temp_directory_path() / ("fuzz_kv_disk_tier_" + std::to_string(::getpid())))
                            .string();
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

// Every record header in the slots, parsed as the tier would.
std::vector<std::pair<tessera::PrefixKey, std::vector<int32_t>>> records(std::span<const uint8_t> bytes) {
    std::vector<std::pair<tessera::PrefixKey, std::vector<int32_t>>> out;
    const uint64_t rec = kLayout.record_bytes();
    for (uint64_t at = tessera::kTierHeaderBytes; at + kLayout.payload_offset() <= bytes.size(); at += rec) {
        tessera::RecordHeader h;
        if (!tessera::parse_record_header(bytes.subspan(at), kLayout, h)) continue;
        std::vector<int32_t> run(kLayout.block_size);
        std::memcpy(run.data(), bytes.data() + at + tessera::kRecordHeaderBytes, run.size() * 4);
        out.emplace_back(h.key, std::move(run));
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1 || size > tessera::kTierHeaderBytes + kSlots * kLayout.record_bytes()) return 0;
    std::vector<uint8_t> file;
    if (data[0] & 1) {
        file.assign(data + 1, data + size);
        (void)tessera::check_tier_header(file, kId, kLayout);
    } else {
        file.resize(tessera::kTierHeaderBytes);
        tessera::encode_tier_header(kId, kLayout, std::span<uint8_t, tessera::kTierHeaderBytes>(file.data(), file.size()));
        file.insert(file.end(), data + 1, data + size);
    }
    auto expected = records(file);
    auto probe = tessera::DiskTier::open(tier_dir(), kId, kLayout, tessera::kTierHeaderBytes + kSlots * kLayout.record_bytes());
    if (!probe) return 0;
    const std::string path = (*probe)->path();
    probe->reset();  // release the lock, then put the input in its place
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(file.data()),
                                                                   static_cast<std::streamsize>(file.size()));
    auto tier = tessera::DiskTier::open(tier_dir(), kId, kLayout, tessera::kTierHeaderBytes + kSlots * kLayout.record_bytes());
    if (!tier) return 0;
    for (const auto& [key, run] : expected) (void)(*tier)->load(key, run);
    const std::vector<int32_t> run(kLayout.block_size, 1);
    const std::vector<uint8_t> kv(kLayout.block_bytes, 2);
    (void)(*tier)->store(tessera::prefix_chain_key(tessera::prefix_root_key(0), run), run, kv);
    return 0;
}
