// A 128-bit fingerprint of a GGUF model, computed once: what a cache kept
// outside the process (the KV disk tier) is tied to, so a cache written by
// another model is never read as this one's.
#pragma once

#include <array>
#include <cstdint>

#include "gguf/gguf_file.h"

namespace tessera {

// Hashes every metadata key and value, every tensor's name, type, shape and
// offset, and the first and last 4 KiB of each tensor's data (so two
// fine-tunes of one architecture differ). Cost: a few MB of reads.
std::array<uint64_t, 2> gguf_fingerprint(const GgufFile& file);

}  // namespace tessera
