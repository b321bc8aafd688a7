// A mapped file truncated under the process: reads of the lost pages must
// return zeros and mark the mapping damaged instead of killing the process
// with SIGBUS, while a SIGBUS anywhere else still does what it did before.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/sigbus_guard.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& stem) {
    return (fs::temp_directory_path() / (stem + "-" + std::to_string(getpid()))).string();
}

void write_bytes(const std::string& path, size_t n, char byte) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    std::vector<char> bytes(n, byte);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads through a volatile pointer so the compiler keeps every load.
uint8_t read_byte(const uint8_t* p) { return *static_cast<const volatile uint8_t*>(p); }

TEST(SigbusGuardTest, TruncatedMappingReadsZerosAndIsMarkedDamaged) {
    const std::string path = temp_path("tessera-sigbus");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = 64 * page;
    write_bytes(path, size, 'x');
    auto m = MappedFile::open(path);
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_FALSE(m->damaged());
    EXPECT_FALSE(m->shrunk());
    EXPECT_EQ(read_byte(m->data() + size - 1), 'x');

    const unsigned long absorbed = sigbus_guard::absorbed_faults();
    ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(8 * page)), 0);
    EXPECT_TRUE(m->shrunk());
    EXPECT_FALSE(m->damaged()) << "nothing has faulted yet";
    // Past the new end: SIGBUS without the guard; zeros with it.
    EXPECT_EQ(read_byte(m->data() + 20 * page + 5), 0);
    EXPECT_TRUE(m->damaged());
    EXPECT_EQ(sigbus_guard::absorbed_faults(), absorbed + 1);
    // Every later lost page was replaced by the same fault, the first lost
    // one included on its next fault; pages the file kept are still its own.
    EXPECT_EQ(read_byte(m->data() + size - 1), 0);
    EXPECT_EQ(read_byte(m->data() + 8 * page), 0);
    EXPECT_EQ(read_byte(m->data() + 8 * page - 1), 'x');
    EXPECT_EQ(read_byte(m->data()), 'x');
    EXPECT_EQ(sigbus_guard::absorbed_faults(), absorbed + 2);
    std::remove(path.c_str());
}

// A new mapping after a damaged one that was released starts undamaged,
// and moving a MappedFile carries its guard along.
TEST(SigbusGuardTest, GuardFollowsMovesAndSlotsAreReleased) {
    const std::string path = temp_path("tessera-sigbus-move");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (int round = 0; round < sigbus_guard::kMaxMappings + 2; ++round) {
        write_bytes(path, 4 * page, 'y');
        auto opened = MappedFile::open(path);
        ASSERT_TRUE(opened.ok()) << opened.error();
        MappedFile m = std::move(*opened);
        EXPECT_FALSE(m.damaged()) << "round " << round;
        ASSERT_EQ(truncate(path.c_str(), 0), 0);
        EXPECT_EQ(read_byte(m.data() + page), 0);
        EXPECT_TRUE(m.damaged()) << "round " << round << ": slots not released?";
    }
    std::remove(path.c_str());
}

// A SIGBUS from a mapping nobody registered goes to the previous handler:
// the default action (death by SIGBUS) or, under AddressSanitizer, its
// report. The child maps the file itself, bypassing MappedFile.
TEST(SigbusGuardDeathTest, FaultOutsideRegisteredMappingsStillKills) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string path = temp_path("tessera-sigbus-raw");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    write_bytes(path, 4 * page, 'z');
    {
        auto guarded = MappedFile::open(path);  // the handler is installed
        ASSERT_TRUE(guarded.ok()) << guarded.error();
    }
    auto fault_unguarded = [&] {
        auto guarded = MappedFile::open(path);  // installed in this process too
        if (!guarded.ok()) _exit(3);
        const int fd = ::open(path.c_str(), O_RDONLY);
        void* raw = mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0);
        if (raw == MAP_FAILED || truncate(path.c_str(), 0) != 0) _exit(4);
        std::fprintf(stderr, "read %d\n", read_byte(static_cast<const uint8_t*>(raw) + page));
        _exit(0);  // survived: the guard took a fault that was not its own
    };
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_DEATH(fault_unguarded(), "BUS");
#else
    EXPECT_EXIT(fault_unguarded(), testing::KilledBySignal(SIGBUS), "");
#endif
    std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera
