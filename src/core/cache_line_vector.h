// std::vector storage aligned to a cache line. malloc aligns large blocks to
// 16 bytes, so every 64-byte SIMD load of a row whose size is a multiple of
// 64 bytes (KV blocks, activation rows) touched two cache lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace tessera {

inline constexpr size_t kCacheLineBytes = 64;

template <class T>
struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <class U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLineBytes})); }
    void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t{kCacheLineBytes}); }
    template <class U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept {
        return true;
    }
};

template <class T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace tessera
