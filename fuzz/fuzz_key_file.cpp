// libFuzzer target: arbitrary bytes as an API key file. Parsing must not
// crash, and what it accepts must hold together: unique keys and names,
// names fit for a Prometheus label, limits in range; an error names a line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "server/key_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto specs = tessera::parse_key_file(text);
    if (!specs) {
        const std::string& e = specs.error();
        const bool explained = e.rfind("line ", 0) == 0 || e.find("no keys") != std::string::npos ||
                               e.find("16 MiB") != std::string::npos;
        if (!explained) std::abort();
        return 0;
    }
    std::set<std::string> keys, names;
    for (const tessera::KeySpec& s : specs.value()) {
        if (s.key.empty() || s.key.find_first_of(" \t\r\n") != std::string::npos) std::abort();
        if (!keys.insert(s.key).second || !names.insert(s.name).second) std::abort();
        if (s.name.empty() || s.name.find_first_of("\"\\{}= \n") != std::string::npos) std::abort();
        const tessera::KeyLimits& l = s.limits;
        if (l.rpm < 0 || l.rpm > tessera::kMaxPerMinute || l.tpm < 0 || l.tpm > tessera::kMaxPerMinute) std::abort();
        if (l.streams < 0 || l.streams > tessera::kMaxStreams) std::abort();
    }
    return 0;
}
