// CPU vendor facts the x86 kernels tune for (dot_x86.h).
#include "kernels/cpu/dot_x86.h"

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstring>

namespace tessera::x86 {
namespace {

bool cpu_is_amd() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) return false;
    char vendor[12];
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    return std::memcmp(vendor, "AuthenticAMD", 12) == 0;
}

// The CPUID family with the extended family added (AMD's rule).
unsigned cpu_family() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return 0;
    const unsigned base = (a >> 8) & 0xF;
    return base == 0xF ? base + ((a >> 20) & 0xFF) : base;
}

}  // namespace

bool nta_weight_streams() {
    static const bool amd = cpu_is_amd();
    return amd;
}

bool sequential_decode_rows() {
    static const bool family_19h = cpu_is_amd() && cpu_family() == 0x19;
    return family_19h;
}

}  // namespace tessera::x86
#else
namespace tessera::x86 {
bool nta_weight_streams() { return false; }
bool sequential_decode_rows() { return false; }
}  // namespace tessera::x86
#endif
