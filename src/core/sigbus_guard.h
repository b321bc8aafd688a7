// Survives SIGBUS from file mappings whose file shrank underneath them: a
// process-wide SIGBUS handler that, for a fault inside a registered mapping,
// puts zero pages where the lost ones were and marks the mapping damaged, so
// the faulting read returns zeros and the owner can fail its work cleanly.
// Faults anywhere else go to the handler installed before ours (or kill the
// process as SIGBUS always did).
//
// Why not prevent the fault instead: a truncation removes the file's pages
// from every mapping of it, MAP_PRIVATE (unwritten pages are still the page
// cache's), MAP_POPULATE and mlock included; copying the weights to
// anonymous memory would double their memory; a read lease (F_SETLEASE)
// needs file ownership or CAP_LEASE and only delays the truncating process
// by /proc/sys/fs/lease-break-time. So the fault is made survivable instead.
#pragma once

#include <cstddef>

namespace tessera::sigbus_guard {

// Registers [begin, begin + size) (installing the handler on first use);
// returns a slot for damaged() / unregister_mapping(), or -1 when all
// kMaxMappings slots are taken (the mapping is then unguarded: SIGBUS kills).
int register_mapping(const void* begin, size_t size);

// Before the range is unmapped: a later fault there is no longer ours.
void unregister_mapping(int slot);

// Whether a fault in the slot's range was turned into zero pages. Sticky.
bool damaged(int slot);

// How many faults inside registered mappings were absorbed (tests, logs).
unsigned long absorbed_faults();

constexpr int kMaxMappings = 64;

}  // namespace tessera::sigbus_guard
