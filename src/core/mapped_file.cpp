// POSIX mmap of a whole file, read-only and private.
#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tessera {

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
    other.data_ = nullptr;
    other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        path_ = std::move(other.path_);
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

void MappedFile::release() {
    if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

Expected<MappedFile> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return Status::error("cannot stat '" + path + "': " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status::error("'" + path + "' is not a regular file");
    }
    MappedFile file;
    file.path_ = path;
    file.size_ = static_cast<size_t>(st.st_size);
    if (file.size_ > 0) {
        void* p = mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            ::close(fd);
            file.size_ = 0;
            return Status::error("cannot map '" + path + "': " + std::strerror(err));
        }
        file.data_ = static_cast<const uint8_t*>(p);
        madvise(p, file.size_, MADV_HUGEPAGE);  // advice: failing changes nothing (see the header)
    }
    ::close(fd);
    TS_RETURN_IF_ERROR(file.populate());
    return file;
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

size_t MappedFile::huge_page_bytes() const {
    if (data_ == nullptr) return 0;
    std::FILE* f = std::fopen("/proc/self/smaps", "r");
    if (f == nullptr) return 0;
    char want[32];
    std::snprintf(want, sizeof want, "%lx-", reinterpret_cast<unsigned long>(data_));
    char line[512];
    bool inside = false;
    size_t kib = 0;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, want, std::strlen(want)) == 0) {
            inside = true;
        } else if (inside && std::sscanf(line, "FilePmdMapped: %zu kB", &kib) == 1) {
            break;
        }
    }
    std::fclose(f);
    return kib * 1024;
}

}  // namespace tessera
