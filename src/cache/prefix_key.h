// The identity of a cached block outside RAM: a 128-bit hash chain over the
// cache salt and every token up to the end of the block, so one key names a
// whole prefix (the disk tier stores blocks by it and also keeps each block's
// own token run, which a load compares exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace tessera {

struct PrefixKey {
    uint64_t hi = 0;
    uint64_t lo = 0;
    bool operator==(const PrefixKey&) const = default;
};

// The key of the empty prefix of isolation domain `salt`.
PrefixKey prefix_root_key(uint64_t salt);
// The key of `parent`'s prefix followed by one block's run.
PrefixKey prefix_chain_key(const PrefixKey& parent, std::span<const int32_t> run);

struct PrefixKeyHash {
    size_t operator()(const PrefixKey& k) const { return static_cast<size_t>(k.hi ^ (k.lo * 0x9E3779B97F4A7C15ull)); }
};

}  // namespace tessera
