// A read-only memory-mapped file. Model weights are used in place from the
// mapping, so loading a model costs no copy and no allocation.
//
// A mapped file that another process truncates turns later reads of the lost
// pages into SIGBUS. open() therefore faults every page in through
// populate(), which reports a shrunk file as an error instead; callers run it
// again once they have read what they need (GgufFile::open does), so a file
// cut while it is being loaded fails the load cleanly. After the load, the
// mapping is registered with sigbus_guard: a read of a page the file lost
// returns zeros instead of killing the process, and damaged() turns true, so
// the owner (the engine) fails its requests; shrunk() also tells a file cut
// within its last page, whose lost bytes read as zeros with no fault at all.
//
// How the page cache holds a model file matters to decode speed: the 1.1B
// test model decoded at 46 t/s while its file sat in the cache as written
// (small folios) and at 57-58 t/s once it had been dropped and read back in
// through a mapping, which on ext4 builds 2 MiB folios (docs/benchmarks/HISTORY.md).
// The mapping asks for 2 MiB pages (MADV_HUGEPAGE) so those folios are
// mapped whole, and open() does the drop and read itself when more than
// 1/kMaxSmallShare of the file is left on small pages: it drops the file's
// clean pages that no process maps (POSIX_FADV_DONTNEED) and faults them in
// again through the mapping, once per load (a file with nothing on 2 MiB
// pages first tries its first 2 MiB alone: where the kernel or filesystem
// builds no large page-cache folios the whole file would be re-read on
// every load for nothing). One thread, 1.1B Q4_0 decode,
// the same binary alternated six times: 54.3 t/s from a file 80% on 2 MiB
// pages, 59.8 t/s from a copy read back this way (100%); the re-read made
// that load 1.4 s longer (620 MB), later loads find the folios in place.
// huge_page_bytes() tells which state a run was in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace tessera {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;

    // Maps the whole file and populates it (see populate()).
    static Expected<MappedFile> open(const std::string& path);

    // Faults every page of the mapping into memory without touching it from
    // user space: an error (not SIGBUS) when the file is now shorter than the
    // mapping. A no-op where the kernel lacks MADV_POPULATE_READ (< 5.14).
    Status populate() const;

    // Bytes of the mapping the kernel backs with 2 MiB pages (PMD mappings,
    // /proc/self/smaps' FilePmdMapped); 0 where that cannot be read.
    size_t huge_page_bytes() const;

    // True once a read of this mapping faulted because the file had shrunk
    // (the read returned zeros; see sigbus_guard.h). Sticky; async-safe.
    bool damaged() const;
    // Whether the file (the inode mapped, whatever its name is now) is
    // shorter than the mapping: one fstat.
    bool shrunk() const;

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    static constexpr size_t kMaxSmallShare = 16;
    // Whether more than 1/kMaxSmallShare of a populated mapping that could
    // sit on 2 MiB pages does not.
    bool mostly_small_pages() const;
    // Drops the first `bytes` of the file from this mapping and from the
    // page cache (where no one else maps them) and populates again.
    Status read_back(int fd, size_t bytes) const;
    void release();
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    int fd_ = -1;          // kept open for shrunk()
    int guard_slot_ = -1;  // sigbus_guard slot; -1 before the load completes
    std::string path_;
};

}  // namespace tessera
