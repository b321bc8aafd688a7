// In-flight prefix sharing. The prefix cache only holds blocks that are
// already computed, so when many requests with one long common prefix arrive
// together, each would prefill that prefix itself. The scheduler instead holds
// a waiting sequence back while a running sequence is still computing blocks
// the two share; those blocks enter the prefix cache as each step completes
// them, and the held sequence is admitted with only its own tail to prefill.
#pragma once

#include <cstdint>
#include <list>
#include <span>

#include "sched/sequence.h"

namespace tessera {

// The longest block-aligned prefix of `lookup` that some running sequence of
// the same salt shares and has not finished computing yet (so its blocks are
// still on their way into the prefix cache); 0 when there is none.
int64_t pending_shared_tokens(std::span<const int32_t> lookup, uint64_t salt,
                              const std::list<Sequence*>& running, int32_t block_size);

}  // namespace tessera
