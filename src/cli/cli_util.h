// Shared helpers for subcommands: CLI11 parsing that turns every parse error
// into one line on stderr, a default thread count, and reading a text file.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "core/status.h"

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

// The whole file at `path` ("-": stdin).
inline Expected<std::string> read_text(const std::string& path) {
    if (path == "-") {
        return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline int default_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace tessera
