// The block tables of the scheduler's sequences against the KV cache's pool:
// whole blocks for full runs of block_size positions, and a half block for a
// sequence's last run while it is at most half a block long, so the empty
// tail slots a running sequence holds average a quarter block instead of
// half a block. A half run that must grow moves into a whole block (a copy of
// at most half a block of K/V per layer); a run shared by forked choices is
// copied before it is written (copy-on-write).
#pragma once

#include <cstdint>
#include <functional>
#include <list>

#include "model/kv_cache.h"
#include "sched/sequence.h"

namespace tessera {

class BlockTables {
public:
    // evict: frees some unreferenced blocks (the prefix cache's); false when
    // there are none to free.
    BlockTables(KvCache& cache, std::function<bool()> evict);

    // Makes slots exist for positions [0, upto) of seq and makes the run
    // receiving position n_computed its own; false when the pool ran out
    // (the table stays valid, possibly with some new entries).
    bool ensure(Sequence& seq, int64_t upto);
    // Adds a holder to every run of seq's table (a copy made for a fork).
    void share(const Sequence& seq);
    // Drops seq's holds and empties its table.
    void release(Sequence& seq);
    // Slots seq's table reaches.
    int64_t capacity(const Sequence& seq) const;
    // Allocated but empty slots: the tails of the running sequences' last
    // runs (a tail shared by forks counted once) plus the free halves of
    // split blocks, which only another short run can use.
    int64_t unfilled(const std::list<Sequence*>& running) const;

private:
    int32_t take(bool half);  // the first slot of a new whole or half block, or -1
    void drop(int32_t slot, bool half);
    bool shared(int32_t slot, bool half) const;

    KvCache& cache_;
    std::function<bool()> evict_;
};

}  // namespace tessera
