// Zero-filled memory whose pages become resident only when first written:
// an anonymous mapping. A zero-filled vector wrote every page up front, so
// a KV cache's whole budget counted in the process's RSS from the start
// (SmolLM2-135M at -c 8192: 189 MB before the first token).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {

class ZeroPages {
public:
    ZeroPages() = default;
    // size bytes, zero, page-aligned; one inaccessible page follows them, so
    // an overrun faults at once. Throws std::bad_alloc if the mapping fails.
    explicit ZeroPages(size_t size);
    ~ZeroPages();
    ZeroPages(ZeroPages&& other) noexcept;
    ZeroPages& operator=(ZeroPages&& other) noexcept;
    ZeroPages(const ZeroPages&) = delete;
    ZeroPages& operator=(const ZeroPages&) = delete;

    uint8_t* data() { return data_; }
    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }

private:
    void release();

    uint8_t* data_ = nullptr;
    size_t size_ = 0;
    size_t mapped_ = 0;  // size_ rounded up to pages, plus the guard page
};

}  // namespace tessera
