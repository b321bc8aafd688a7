// Shared helpers for subcommands: CLI11 parsing that turns every parse error
// into one line on stderr, and a default thread count.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <thread>

namespace tessera {

// Returns an exit code when the command should stop (help shown or bad args).
inline std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::printf("%s", app.help().c_str());
        return 0;
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "tessera %s: %s\n", app.get_name().c_str(), e.what());
        return 2;
    }
    return std::nullopt;
}

inline int default_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace tessera
