// Where the shared test fixtures live, and what a test does when they are
// missing: CTest counts a skip as a pass, so in CI (CI set and not "false"
// or "0") a missing fixture fails the test; only a developer's partial
// checkout may skip, and it says so in capitals with the path it looked at.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace tessera::test {

// TESSERA_FIXTURES if set (tests of this guard point it elsewhere), else the
// checkout's ../shared/fixtures.
inline std::string fixtures_dir() {
    const char* env = std::getenv("TESSERA_FIXTURES");
    return env != nullptr && *env != '\0' ? std::string(env) : std::string(TESSERA_SOURCE_DIR "/../shared/fixtures");
}

// The vocabulary-only GGUF files and their .inp/.out cases, with a trailing '/'.
inline std::string vocab_fixtures_dir() { return fixtures_dir() + "/vocab/"; }

inline bool running_in_ci() {
    const char* ci = std::getenv("CI");
    if (ci == nullptr) return false;
    const std::string_view v(ci);
    return !v.empty() && v != "0" && v != "false";
}

inline std::string missing_fixtures_message(const std::string& path) {
    return "MISSING TEST FIXTURES: " + path +
           " does not exist (clone the shared fixtures next to the checkout, or point TESSERA_FIXTURES at them)";
}

}  // namespace tessera::test

// Fails (CI) or loudly skips (elsewhere) the current test when `path` does
// not exist; use it in a test body or SetUp().
#define TESSERA_REQUIRE_FIXTURE(path)                                                                  \
    do {                                                                                               \
        const std::string tessera_fixture_path_ = (path);                                              \
        if (!std::filesystem::exists(tessera_fixture_path_)) {                                         \
            if (::tessera::test::running_in_ci()) {                                                    \
                FAIL() << ::tessera::test::missing_fixtures_message(tessera_fixture_path_)             \
                       << "; CI is set, so this fails instead of skipping";                            \
            }                                                                                          \
            GTEST_SKIP() << ::tessera::test::missing_fixtures_message(tessera_fixture_path_)           \
                         << "; SKIPPED, THIS TEST CHECKED NOTHING (it fails when CI is set)";          \
        }                                                                                              \
    } while (0)
