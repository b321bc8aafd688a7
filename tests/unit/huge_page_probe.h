// Whether this kernel and the filesystem under `path` give a freshly read
// file 2 MiB pages at all, found with a bare mmap (no MappedFile code): the
// mapped-file tests require 2 MiB pages where this probe gets them, and say
// they tested nothing where it does not, instead of passing on zero.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace tessera::test {

// FilePmdMapped (bytes) of the mapping that starts at `start`, from
// /proc/self/smaps; 0 where it is not listed.
inline size_t pmd_mapped_bytes(const void* start) {
    std::ifstream smaps("/proc/self/smaps");
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "%lx-", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(start)));
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        if (line.rfind(prefix, 0) == 0) {
            inside = true;
        } else if (inside && line.rfind("FilePmdMapped:", 0) == 0) {
            return std::stoul(line.substr(14)) * 1024;
        }
    }
    return 0;
}

// Bytes of the `size`-byte file at `path` on 2 MiB pages after dropping it
// from the page cache and faulting it in through a MADV_HUGEPAGE mapping.
inline size_t probe_fresh_read_huge_bytes(const std::string& path, size_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return 0;
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return 0;
    madvise(p, size, MADV_HUGEPAGE);
    volatile uint8_t sink = 0;
    for (size_t off = 0; off < size; off += 4096) sink = sink + static_cast<const uint8_t*>(p)[off];
    const size_t huge = pmd_mapped_bytes(p);
    munmap(p, size);
    return huge;
}

}  // namespace tessera::test
