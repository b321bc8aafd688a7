// The SIGBUS handler and its registry of guarded mappings. A signal handler
// may not lock or allocate, so the registry is a fixed array of lock-free
// atomics, and the handler only reads it, makes one mmap system call and
// stores two flags.
#include "core/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace tessera::sigbus_guard {
namespace {

enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
    std::atomic<int> state{kFree};
    std::atomic<uintptr_t> begin{0};
    std::atomic<uintptr_t> end{0};  // page-rounded: the mapping's last page is whole
    std::atomic<bool> damaged{false};
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

// Process-wide by necessity: a signal handler is per process and reaches no
// object, so the registry it reads, the handler it chains to and the page
// size it rounds by must be statics. They are written only outside the
// handler (registration, one installation) and hold no heap memory.
Slot g_slots[kMaxMappings];
struct sigaction g_previous {};
std::atomic<uintptr_t> g_page_size{4096};
std::atomic<unsigned long> g_absorbed{0};

// The handler that was there before ours, as the kernel would have run it.
void chain(int sig, siginfo_t* info, void* context) {
    if (g_previous.sa_flags & SA_SIGINFO) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler == SIG_IGN) return;
    if (g_previous.sa_handler == SIG_DFL) {
        // Die of SIGBUS as if we had never been here: with the default action
        // back, the signal raised now is delivered when the handler returns
        // (a faulting instruction would also fault again).
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_previous.sa_handler(sig);
}

// Replaces [page of addr, slot end) with anonymous read-only zero pages
// (everything past the first lost page is past the new end of file too).
// The raw system call keeps sanitizer interceptors out of the handler.
bool zero_fill(const Slot& slot, uintptr_t addr) {
    const uintptr_t page = addr & ~(g_page_size.load(std::memory_order_relaxed) - 1);
    const uintptr_t end = slot.end.load(std::memory_order_relaxed);
    const long r = syscall(SYS_mmap, page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return r != -1;
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    // si_code > 0: raised by the kernel for a fault, not sent by kill().
    if (info != nullptr && info->si_code > 0) {
        const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
        for (Slot& slot : g_slots) {
            if (slot.state.load(std::memory_order_acquire) != kLive) continue;
            if (addr < slot.begin.load(std::memory_order_relaxed) || addr >= slot.end.load(std::memory_order_relaxed)) {
                continue;
            }
            if (!zero_fill(slot, addr)) break;  // cannot repair: behave as before
            slot.damaged.store(true, std::memory_order_release);
            g_absorbed.fetch_add(1, std::memory_order_relaxed);
            errno = saved_errno;
            return;  // the faulting read runs again and reads zeros
        }
    }
    errno = saved_errno;
    chain(sig, info, context);
}

// Installed once, on the first registration, so it sits on top of any
// handler installed at startup (AddressSanitizer's, with handle_sigbus=1).
bool install() {
    g_page_size.store(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), std::memory_order_relaxed);
    // The previous handler is read before ours is in place, so a fault on
    // another thread never finds g_previous unset.
    if (sigaction(SIGBUS, nullptr, &g_previous) != 0) return false;
    struct sigaction ours {};
    ours.sa_sigaction = on_sigbus;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    return sigaction(SIGBUS, &ours, nullptr) == 0;
}

}  // namespace

int register_mapping(const void* begin, size_t size) {
    static const bool installed = install();
    if (!installed || begin == nullptr || size == 0) return -1;
    const uintptr_t page = g_page_size.load(std::memory_order_relaxed);
    const auto b = reinterpret_cast<uintptr_t>(begin);
    for (int i = 0; i < kMaxMappings; ++i) {
        Slot& slot = g_slots[i];
        int expected = kFree;
        if (!slot.state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
        slot.begin.store(b, std::memory_order_relaxed);
        slot.end.store((b + size + page - 1) & ~(page - 1), std::memory_order_relaxed);
        slot.damaged.store(false, std::memory_order_relaxed);
        slot.state.store(kLive, std::memory_order_release);
        return i;
    }
    return -1;
}

void unregister_mapping(int slot) {
    if (slot < 0 || slot >= kMaxMappings) return;
    g_slots[slot].state.store(kFree, std::memory_order_release);
}

bool damaged(int slot) {
    if (slot < 0 || slot >= kMaxMappings) return false;
    return g_slots[slot].damaged.load(std::memory_order_acquire);
}

unsigned long absorbed_faults() { return g_absorbed.load(std::memory_order_relaxed); }

}  // namespace tessera::sigbus_guard
