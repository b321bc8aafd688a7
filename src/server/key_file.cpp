// Parser of the API key file (key_file.h). Errors name the line and the field
// number, never a field's text: a stray second key on a line must not end up
// in a log.
#include "server/key_file.h"

#include <cstdio>
#include <unordered_map>
#include <utility>

#include "server/api_keys.h"

namespace tessera {
namespace {

constexpr std::string_view kBlank = " \t\r";

std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> out;
    size_t at = 0;
    while ((at = line.find_first_not_of(kBlank, at)) != std::string_view::npos) {
        const size_t end = std::min(line.find_first_of(kBlank, at), line.size());
        out.push_back(line.substr(at, end - at));
        at = end;
    }
    return out;
}

// Names and groups appear as Prometheus label values and in logs: a plain
// charset needs no escaping anywhere.
bool valid_label(std::string_view s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.';
        if (!ok) return false;
    }
    return true;
}

bool parse_count(std::string_view s, int64_t max, int64_t& out) {
    if (s.empty() || s.size() > 11) return false;
    int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    if (v < 1 || v > max) return false;
    out = v;
    return true;
}

// One `name=value` field into `spec`; an error message (without the field's
// text) or empty.
std::string apply_setting(std::string_view field, KeySpec& spec, uint32_t& seen) {
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos) return "is not a setting (name=, rpm=, tpm=, streams=, group=)";
    const std::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    struct Count {
        std::string_view name;
        int64_t KeyLimits::*member;
        int64_t max;
    };
    static constexpr Count kCounts[] = {{"rpm", &KeyLimits::rpm, kMaxPerMinute},
                                        {"tpm", &KeyLimits::tpm, kMaxPerMinute},
                                        {"streams", &KeyLimits::streams, kMaxStreams}};
    static constexpr std::string_view kNames[] = {"name", "group", "rpm", "tpm", "streams"};
    uint32_t bit = 0;
    while (bit < 5 && kNames[bit] != name) ++bit;
    if (bit == 5) return "is not a setting (name=, rpm=, tpm=, streams=, group=)";
    if (seen & (1u << bit)) return "sets " + std::string(name) + " a second time";
    seen |= 1u << bit;
    if (bit < 2) {
        if (!valid_label(value)) return std::string(name) + " must be 1 to 64 letters, digits, '_', '-' or '.'";
        (bit == 0 ? spec.name : spec.group) = std::string(value);
        return "";
    }
    const Count& c = kCounts[bit - 2];
    if (!parse_count(value, c.max, spec.limits.*c.member)) {
        return std::string(name) + " must be a whole number from 1 to " + std::to_string(c.max);
    }
    return "";
}

Expected<KeySpec> parse_line(std::string_view line) {
    const std::vector<std::string_view> fields = fields_of(line);
    KeySpec spec;
    spec.key = std::string(fields.front());
    uint32_t seen = 0;
    for (size_t i = 1; i < fields.size(); ++i) {
        const std::string why = apply_setting(fields[i], spec, seen);
        if (!why.empty()) return Status::error("field " + std::to_string(i + 1) + " " + why);
    }
    if (spec.name.empty()) spec.name = default_key_name(spec.key);
    return spec;
}

}  // namespace

std::string default_key_name(std::string_view key) {
    // A hash of "name " + key, so the name is not a piece of the cache salt.
    const uint64_t h = cache_salt_for_key("name " + std::string(key));
    char buf[16];
    std::snprintf(buf, sizeof buf, "key-%08x", static_cast<unsigned>(h >> 32));
    return buf;
}

Expected<std::vector<KeySpec>> parse_key_file(std::string_view text) {
    if (text.size() > kMaxKeyFileBytes) return Status::error("the key file is over 16 MiB");
    std::vector<KeySpec> specs;
    std::unordered_map<std::string, size_t> key_line, name_line;
    size_t line_no = 0;
    for (size_t at = 0; at <= text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        ++line_no;
        const size_t first = line.find_first_not_of(kBlank);
        if (first == std::string_view::npos || line[first] == '#') continue;
        const std::string where = "line " + std::to_string(line_no) + ": ";
        auto spec = parse_line(line);
        if (!spec) return Status::error(where + spec.error());
        if (auto [it, fresh] = key_line.emplace(spec->key, line_no); !fresh) {
            return Status::error(where + "the same key as line " + std::to_string(it->second));
        }
        if (auto [it, fresh] = name_line.emplace(spec->name, line_no); !fresh) {
            return Status::error(where + "the name '" + spec->name + "' is already used on line " +
                                 std::to_string(it->second));
        }
        specs.push_back(std::move(*spec));
    }
    if (specs.empty()) return Status::error("no keys (one key per line, optionally followed by settings)");
    return specs;
}

}  // namespace tessera
