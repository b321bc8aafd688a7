// Which SIMD levels this run of the suite exercises: the kernel tests cover
// every level up to best_simd_level(), so a level above it is tested nowhere
// on this machine. The test checks the CPU detection against the flags the
// Linux kernel reports in /proc/cpuinfo (a second, independent reading) and
// prints one "[simd levels]" line that scripts/skip_summary.py quotes at the
// end of scripts/test.sh, so a CI machine without AMX says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "kernels/dot_kernels.h"

namespace tessera {
namespace {

std::set<std::string> cpuinfo_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::string> flags;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        for (std::string w; words >> w;) flags.insert(w);
        break;  // every core lists the same flags
    }
    return flags;
}

bool has_all(const std::set<std::string>& flags, std::initializer_list<const char*> names) {
    return std::all_of(names.begin(), names.end(), [&](const char* n) { return flags.count(n) != 0; });
}

// The level the flags allow, up to the VNNI one, and whether they list the
// AMX-INT8 tiles (which also need the OS's leave, asked for at run time).
struct FlagLevels {
    SimdLevel without_amx = SimdLevel::Scalar;
    bool amx = false;
};

FlagLevels levels_from_flags(const std::set<std::string>& flags) {
    FlagLevels out;
    if (!has_all(flags, {"avx2", "fma", "f16c"})) return out;
    out.without_amx = SimdLevel::Avx2;
    if (!has_all(flags, {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"})) return out;
    out.without_amx = SimdLevel::Avx512Vnni;
    out.amx = has_all(flags, {"amx_tile", "amx_int8"});
    return out;
}

std::string why_not(SimdLevel level, SimdLevel cap, const FlagLevels& cpu) {
    if (level > cap) return std::string("TESSERA_KERNELS caps the level at ") + simd_level_name(cap);
    if (level == SimdLevel::Avx512Amx && cpu.without_amx == SimdLevel::Avx512Vnni && cpu.amx) {
        return "the CPU lists AMX-INT8 but the OS gave no leave to use the tiles";
    }
    return "this CPU lacks it";
}

TEST(SimdLevelsTest, DetectionAgreesWithCpuinfoAndReportsWhatRuns) {
    const std::set<std::string> flags = cpuinfo_flags();
    ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
    const FlagLevels cpu = levels_from_flags(flags);
    const char* cap_env = std::getenv("TESSERA_KERNELS");
    const auto cap_parsed = cap_env != nullptr ? parse_simd_level(cap_env) : std::nullopt;
    const SimdLevel cap = cap_parsed.value_or(SimdLevel::Avx512Amx);
    const SimdLevel best = best_simd_level();

    // Never above what the flags allow, never below the flags' non-AMX level.
    const SimdLevel flags_best = cpu.amx ? SimdLevel::Avx512Amx : cpu.without_amx;
    EXPECT_LE(best, std::min(flags_best, cap)) << simd_level_name(best);
    EXPECT_GE(best, std::min(cpu.without_amx, cap)) << simd_level_name(best);

    std::string exercised, skipped;
    for (int l = 0; l <= static_cast<int>(SimdLevel::Avx512Amx); ++l) {
        const auto level = static_cast<SimdLevel>(l);
        if (level <= best) {
            exercised += std::string(exercised.empty() ? "" : " ") + simd_level_name(level);
        } else {
            skipped += std::string(skipped.empty() ? "" : ", ") + simd_level_name(level) + " (" +
                       why_not(level, cap, cpu) + ")";
        }
    }
    std::printf("[simd levels] exercised: %s; not exercised: %s\n", exercised.c_str(),
                skipped.empty() ? "none" : skipped.c_str());
}

}  // namespace
}  // namespace tessera
