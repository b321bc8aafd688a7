// POSIX mmap of a whole file, read-only and private.
#include "core/mapped_file.h"

#include "core/sigbus_guard.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tessera {

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), fd_(other.fd_), guard_slot_(other.guard_slot_),
      path_(std::move(other.path_)) {
    other.data_ = nullptr;
    other.size_ = 0;
    other.fd_ = -1;
    other.guard_slot_ = -1;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        fd_ = other.fd_;
        guard_slot_ = other.guard_slot_;
        path_ = std::move(other.path_);
        other.data_ = nullptr;
        other.size_ = 0;
        other.fd_ = -1;
        other.guard_slot_ = -1;
    }
    return *this;
}

void MappedFile::release() {
    sigbus_guard::unregister_mapping(guard_slot_);  // before the range can be reused
    guard_slot_ = -1;
    if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
    data_ = nullptr;
    size_ = 0;
    fd_ = -1;
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Field `field` (in kB) of the mapping starting at `start` in
// /proc/self/smaps; 0 where that cannot be read.
size_t smaps_kib(const void* start, const char* field) {
    std::FILE* f = std::fopen("/proc/self/smaps", "r");
    if (f == nullptr) return 0;
    char want[32];
    std::snprintf(want, sizeof want, "%lx-", reinterpret_cast<unsigned long>(start));
    const size_t field_len = std::strlen(field);
    char line[512];
    bool inside = false;
    size_t kib = 0;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, want, std::strlen(want)) == 0) {
            inside = true;
        } else if (inside && std::strncmp(line, field, field_len) == 0 && line[field_len] == ':') {
            std::sscanf(line + field_len + 1, "%zu", &kib);
            break;
        }
    }
    std::fclose(f);
    return kib;
}

}  // namespace

Expected<MappedFile> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    MappedFile file;  // owns fd from here on, on every way out
    file.fd_ = fd;
    struct stat st {};
    if (fstat(fd, &st) != 0) return Status::error("cannot stat '" + path + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Status::error("'" + path + "' is not a regular file");
    file.path_ = path;
    file.size_ = static_cast<size_t>(st.st_size);
    if (file.size_ > 0) {
        void* p = mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            file.size_ = 0;
            return Status::error("cannot map '" + path + "': " + std::strerror(errno));
        }
        file.data_ = static_cast<const uint8_t*>(p);
        madvise(p, file.size_, MADV_HUGEPAGE);  // advice: failing changes nothing (see the header)
    }
    TS_RETURN_IF_ERROR(file.populate());
    if (file.mostly_small_pages()) {
        // Nothing on 2 MiB pages yet: whether this kernel, filesystem and
        // memory give the file any is told by its first 2 MiB, read back
        // alone, before the whole file is.
        if (file.huge_page_bytes() == 0) TS_RETURN_IF_ERROR(file.read_back(fd, kHugePage));
        if (file.huge_page_bytes() > 0) TS_RETURN_IF_ERROR(file.read_back(fd, file.size_));
    }
    // From here on a shrinking file no longer kills the process (header).
    // Where the registry is full the mapping is unguarded, as it always was.
    file.guard_slot_ = sigbus_guard::register_mapping(file.data_, file.size_);
    return file;
}

bool MappedFile::mostly_small_pages() const {
    const size_t whole_pages = size_ / kHugePage * kHugePage;
    if (whole_pages == 0 || reinterpret_cast<uintptr_t>(data_) % kHugePage != 0) return false;
    // Not populated (a kernel without MADV_POPULATE_READ): nothing to tell.
    if (smaps_kib(data_, "Rss") * 1024 < whole_pages) return false;
    const size_t small = whole_pages - std::min(whole_pages, huge_page_bytes());
    return small > whole_pages / kMaxSmallShare;
}

Status MappedFile::read_back(int fd, size_t bytes) const {
    // Only this mapping's page-table entries go (a private mapping never
    // written has nothing else); the next touch maps the cache again.
    madvise(const_cast<uint8_t*>(data_), bytes, MADV_DONTNEED);
    posix_fadvise(fd, 0, static_cast<off_t>(bytes), POSIX_FADV_DONTNEED);  // drops clean pages no one maps
    return populate();
}

Status MappedFile::populate() const {
#ifdef MADV_POPULATE_READ
    if (size_ == 0) return ok_status();
    if (madvise(const_cast<uint8_t*>(data_), size_, MADV_POPULATE_READ) == 0) return ok_status();
    const int err = errno;
    if (err == EINVAL) return ok_status();  // older kernel: nothing checked, nothing lost
    if (err == EFAULT) {
        return Status::error("'" + path_ + "' is shorter than when it was opened (was it truncated or rewritten "
                             "in place while loading?)");
    }
    return Status::error("cannot read '" + path_ + "': " + std::strerror(err));
#else
    return ok_status();
#endif
}

bool MappedFile::damaged() const { return sigbus_guard::damaged(guard_slot_); }

bool MappedFile::shrunk() const {
    struct stat st {};
    return fd_ >= 0 && fstat(fd_, &st) == 0 && static_cast<size_t>(st.st_size) < size_;
}

size_t MappedFile::huge_page_bytes() const { return data_ == nullptr ? 0 : smaps_kib(data_, "FilePmdMapped") * 1024; }

}  // namespace tessera
