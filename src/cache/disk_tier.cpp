// DiskTier: one file of fixed-size slots under an exclusive lock, an
// in-memory index (key -> slot) rebuilt at open from the record headers, and
// an LRU list restored from the records' write stamps. Reads and writes are
// whole records with pread/pwrite; nothing in the file is trusted.
#include "cache/disk_tier.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace tessera {
namespace {

bool read_full(int fd, uint8_t* p, uint64_t n, uint64_t offset) {
    while (n > 0) {
        const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        n -= static_cast<uint64_t>(got);
        offset += static_cast<uint64_t>(got);
    }
    return true;
}

bool write_full(int fd, const uint8_t* p, uint64_t n, uint64_t offset) {
    while (n > 0) {
        const ssize_t put = ::pwrite(fd, p, n, static_cast<off_t>(offset));
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return false;
        p += put;
        n -= static_cast<uint64_t>(put);
        offset += static_cast<uint64_t>(put);
    }
    return true;
}

std::string file_name(const TierIdentity& id) {
    char name[64];
    std::snprintf(name, sizeof(name), "kv-%016llx%016llx.tier", static_cast<unsigned long long>(id.hi),
                  static_cast<unsigned long long>(id.lo));
    return name;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Expected<std::unique_ptr<DiskTier>> DiskTier::open(const std::string& dir, const TierIdentity& id,
                                                   const TierLayout& layout, uint64_t size_bytes) {
    const uint64_t record = layout.record_bytes();
    if (record == 0) return Status::error("KV disk tier: unsupported block layout");
    const uint64_t n_slots = size_bytes > kTierHeaderBytes ? (size_bytes - kTierHeaderBytes) / record : 0;
    if (n_slots == 0) {
        return Status::error("--kv-disk-size " + std::to_string(size_bytes) + " holds no block: one takes " +
                             std::to_string(record + kTierHeaderBytes) + " bytes with the file header");
    }
    if (n_slots > (uint64_t{1} << 30)) return Status::error("--kv-disk-size is too large for the block size");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::error("--kv-disk " + dir + ": " + ec.message());
    const std::string path = (std::filesystem::path(dir) / file_name(id)).string();
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::error("--kv-disk: cannot open " + path + ": " + errno_text());
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const std::string why = errno == EWOULDBLOCK ? "another tessera process uses it" : errno_text();
        ::close(fd);
        return Status::error("--kv-disk: " + path + ": " + why);
    }
    std::unique_ptr<DiskTier> tier(new DiskTier(fd, path, layout, static_cast<int64_t>(n_slots)));
    TS_RETURN_IF_ERROR(tier->start(id, kTierHeaderBytes + n_slots * record));
    return tier;
}

DiskTier::DiskTier(int fd, std::string path, const TierLayout& layout, int64_t n_slots)
    : fd_(fd), path_(std::move(path)), layout_(layout), slots_(static_cast<size_t>(n_slots)),
      scratch_(layout.record_bytes()) {}

DiskTier::~DiskTier() { ::close(fd_); }  // closing releases the lock

// Keeps the records of a file this process wrote before (same identity and
// layout); any other file at the path is replaced by an empty tier. The file
// is then cut or extended (sparse) to the configured slot count: records past
// it are gone, and a record cut short reads back as zeros and fails its checksum.
Status DiskTier::start(const TierIdentity& id, uint64_t file_bytes) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return Status::error("--kv-disk: " + path_ + ": " + errno_text());
    uint8_t header[kTierHeaderBytes];
    const bool have = static_cast<uint64_t>(st.st_size) >= kTierHeaderBytes &&
                      read_full(fd_, header, kTierHeaderBytes, 0);
    const Status valid = have ? check_tier_header(header, id, layout_) : Status::error("empty");
    if (!valid.ok()) {
        if (st.st_size > 0) {
            ++stats_.files_rejected;
            std::fprintf(stderr, "tessera: warning: KV disk tier %s ignored and started afresh: %s\n", path_.c_str(),
                         valid.message().c_str());
        }
        if (::ftruncate(fd_, 0) != 0) return Status::error("--kv-disk: " + path_ + ": " + errno_text());
        encode_tier_header(id, layout_, std::span<uint8_t, kTierHeaderBytes>(header));
        if (!write_full(fd_, header, kTierHeaderBytes, 0)) return Status::error("--kv-disk: " + path_ + ": " + errno_text());
    }
    if (::ftruncate(fd_, static_cast<off_t>(file_bytes)) != 0) {
        return Status::error("--kv-disk: " + path_ + ": " + errno_text());
    }
    if (valid.ok()) rebuild_index();
    for (int32_t s = static_cast<int32_t>(slots_.size()) - 1; s >= 0; --s) {
        if (!slots_[static_cast<size_t>(s)].used) free_.push_back(s);
    }
    return ok_status();
}

// Reads every slot's header; of two records with one key the newer stays.
// The LRU order is the write order (reads before the restart are not known).
void DiskTier::rebuild_index() {
    uint8_t bytes[kRecordHeaderBytes];
    for (int32_t s = 0; s < static_cast<int32_t>(slots_.size()); ++s) {
        RecordHeader h;
        if (!read_full(fd_, bytes, kRecordHeaderBytes, offset_of(s))) break;
        if (parse_record_header(bytes, layout_, h)) {
            index_record(s, h);
        } else if (std::any_of(bytes, bytes + kRecordHeaderBytes, [](uint8_t b) { return b != 0; })) {
            ++stats_.rejected;
            clear_header(s);
        }
    }
    std::vector<int32_t> order;
    for (const auto& [key, slot] : index_) order.push_back(slot);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return slots_[static_cast<size_t>(a)].stamp < slots_[static_cast<size_t>(b)].stamp;
    });
    for (int32_t s : order) slots_[static_cast<size_t>(s)].lru = lru_.insert(lru_.end(), s);
}

void DiskTier::index_record(int32_t slot, const RecordHeader& h) {
    const auto [it, fresh] = index_.emplace(h.key, slot);
    if (!fresh) {
        if (slots_[static_cast<size_t>(it->second)].stamp >= h.stamp) return;  // the older copy is left to be overwritten
        slots_[static_cast<size_t>(it->second)].used = false;
        it->second = slot;
    }
    slots_[static_cast<size_t>(slot)] = Slot{h.key, h.stamp, true, {}};
    next_stamp_ = std::max(next_stamp_, h.stamp + 1);
}

void DiskTier::touch(const PrefixKey& key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return;
    lru_.splice(lru_.end(), lru_, slots_[static_cast<size_t>(it->second)].lru);
}

std::span<const uint8_t> DiskTier::load(const PrefixKey& key, std::span<const int32_t> run) {
    const auto it = index_.find(key);
    if (it == index_.end() || run.size() != layout_.block_size) return {};
    const int32_t slot = it->second;
    RecordHeader h;
    const std::span<const int32_t> stored(reinterpret_cast<const int32_t*>(scratch_.data() + kRecordHeaderBytes),
                                          layout_.block_size);
    const std::span<const uint8_t> kv(scratch_.data() + layout_.payload_offset(), layout_.block_bytes);
    if (!read_full(fd_, scratch_.data(), layout_.payload_offset() + layout_.block_bytes, offset_of(slot)) ||
        !parse_record_header(scratch_, layout_, h) || !(h.key == key) || h.checksum != record_checksum(stored, kv)) {
        ++stats_.rejected;
        drop(slot);
        return {};
    }
    if (!std::equal(stored.begin(), stored.end(), run.begin())) return {};  // another prefix under a colliding key
    lru_.splice(lru_.end(), lru_, slots_[static_cast<size_t>(slot)].lru);
    ++stats_.loaded;
    return kv;
}

bool DiskTier::store(const PrefixKey& key, std::span<const int32_t> run, std::span<const uint8_t> kv) {
    if (contains(key)) {
        touch(key);
        return true;
    }
    if (run.size() != layout_.block_size || kv.size() != layout_.block_bytes) return false;
    const int32_t slot = take_slot();
    const RecordHeader h{key, next_stamp_++, record_checksum(run, kv)};
    encode_record_header(h, layout_, std::span<uint8_t, kRecordHeaderBytes>(scratch_.data(), kRecordHeaderBytes));
    std::memcpy(scratch_.data() + kRecordHeaderBytes, run.data(), run.size_bytes());
    std::memcpy(scratch_.data() + layout_.payload_offset(), kv.data(), kv.size());
    if (!write_full(fd_, scratch_.data(), layout_.payload_offset() + kv.size(), offset_of(slot))) {
        ++stats_.write_errors;
        drop(slot);
        return false;
    }
    slots_[static_cast<size_t>(slot)] = Slot{key, h.stamp, true, lru_.insert(lru_.end(), slot)};
    index_.emplace(key, slot);
    ++stats_.stored;
    return true;
}

// A free slot, or the least recently used one emptied.
int32_t DiskTier::take_slot() {
    if (free_.empty()) forget(lru_.front());
    const int32_t slot = free_.back();
    free_.pop_back();
    return slot;
}

// Forgets a slot whose record must never be read again, and clears its header
// on disk so a restart does not index it either.
void DiskTier::drop(int32_t slot) {
    clear_header(slot);
    if (slots_[static_cast<size_t>(slot)].used) {
        forget(slot);
    } else {
        free_.push_back(slot);
    }
}

void DiskTier::clear_header(int32_t slot) {
    static constexpr uint8_t kZeros[kRecordHeaderBytes] = {};
    write_full(fd_, kZeros, kRecordHeaderBytes, offset_of(slot));  // a failure leaves a record that fails again
}

void DiskTier::forget(int32_t slot) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    index_.erase(s.key);
    lru_.erase(s.lru);
    s.used = false;
    free_.push_back(slot);
}

}  // namespace tessera
