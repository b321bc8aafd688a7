// Reading cache_control markers (see cache_control.h).
#include "server/cache_control.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "server/field_reader.h"

namespace tessera {
namespace {

// "<n>s", "<n>m", "<n>h" (Anthropic sends "5m" and "1h").
std::optional<int64_t> ttl_seconds(const std::string& s) {
    if (s.size() < 2) return std::nullopt;
    int64_t n = 0;
    const char* end = s.data() + s.size() - 1;
    const auto [stop, ec] = std::from_chars(s.data(), end, n);
    if (ec != std::errc() || stop != end || n < 0 || n > (int64_t{1} << 32)) return std::nullopt;
    switch (s.back()) {
        case 's': return n;
        case 'm': return n * 60;
        case 'h': return n * 3600;
        default: return std::nullopt;
    }
}

bool is_system(const Json& message) {
    if (!message.is_object()) return false;
    const auto role = message.find("role");
    return role != message.end() && role->is_string() && (*role == "system" || *role == "developer");
}

}  // namespace

std::optional<ApiError> read_cache_marker(const Json& marker, const CacheControlOptions& options, const char* param,
                                          std::chrono::seconds& ttl) {
    const std::string p = param;
    if (!marker.is_object()) return bad_request(p, "'cache_control' must be an object such as {\"type\": \"ephemeral\"}");
    const auto type = marker.find("type");
    if (type == marker.end() || !type->is_string() || *type != "ephemeral") {
        return bad_request(p, "'cache_control.type' must be \"ephemeral\"");
    }
    ttl = options.default_ttl;
    const auto t = marker.find("ttl");
    if (t == marker.end() || t->is_null()) return std::nullopt;
    std::optional<int64_t> seconds;
    if (t->is_string()) seconds = ttl_seconds(t->get<std::string>());
    else if (t->is_number()) seconds = json_to_int(*t, 1, int64_t{1} << 32);
    if (!seconds || *seconds < 1) {
        return bad_request(p, "'cache_control.ttl' must be seconds, or a string such as \"5m\" or \"1h\"");
    }
    if (*seconds > options.max_ttl.count()) {
        return bad_request(p, "'cache_control.ttl' is " + std::to_string(*seconds) + " s; this server keeps prompts " +
                                  "at most " + std::to_string(options.max_ttl.count()) + " s");
    }
    ttl = std::chrono::seconds(*seconds);
    return std::nullopt;
}

std::optional<ApiError> find_cache_marks(const Json& body, const CacheControlOptions& options, CacheMark& out) {
    std::chrono::seconds ttl{0};
    const auto take = [&](const Json& marker, const std::string& param) -> std::optional<ApiError> {
        if (auto err = read_cache_marker(marker, options, param.c_str(), ttl)) return err;
        out.ttl = std::max(out.ttl, ttl);
        return std::nullopt;
    };
    if (const auto top = body.find("cache_control"); top != body.end() && !top->is_null()) {
        if (auto err = take(*top, "cache_control")) return err;
        out.whole_prompt = true;
    }
    const auto messages = body.find("messages");
    if (messages == body.end() || !messages->is_array()) return std::nullopt;
    for (size_t i = 0; i < messages->size(); ++i) {
        const Json& m = (*messages)[i];
        if (!m.is_object()) continue;  // the template's render names the bad message
        const std::string param = "messages[" + std::to_string(i) + "].cache_control";
        if (const auto c = m.find("cache_control"); c != m.end() && !c->is_null()) {
            if (auto err = take(*c, param)) return err;
            out.last_message = static_cast<int64_t>(i);
        }
        const auto content = m.find("content");
        if (content == m.end() || !content->is_array()) continue;
        for (const Json& part : *content) {
            if (!part.is_object()) continue;
            if (const auto c = part.find("cache_control"); c != part.end() && !c->is_null()) {
                if (auto err = take(*c, param)) return err;
                out.last_message = static_cast<int64_t>(i);
            }
        }
    }
    if (options.system_prompt_ttl.count() > 0 && out.last_message < 0 && !out.whole_prompt) {
        int64_t last_system = -1;
        while (last_system + 1 < static_cast<int64_t>(messages->size()) && is_system((*messages)[last_system + 1])) {
            ++last_system;
        }
        if (last_system >= 0) {
            out.last_message = last_system;
            out.ttl = options.system_prompt_ttl;
        }
    }
    return std::nullopt;
}

}  // namespace tessera
