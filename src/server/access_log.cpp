#include "server/access_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "server/json_util.h"

namespace tessera {
namespace {

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string utc_now() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Milliseconds with one decimal: enough for a log, stable to read.
double round_ms(double ms) { return static_cast<double>(static_cast<long long>(ms * 10.0 + 0.5)) / 10.0; }

}  // namespace

std::string format_access_line(const AccessRecord& r, AccessLogFormat format) {
    const double total = round_ms(ms_between(r.started, r.finished));
    const bool generation = r.usage.prompt_tokens >= 0;
    const double ttft = r.usage.first_token ? round_ms(ms_between(r.started, *r.usage.first_token)) : -1.0;
    if (format == AccessLogFormat::Json) {
        Json j = {{"time", utc_now()}, {"client", r.client}, {"method", r.method}, {"path", r.path},
                  {"status", r.status}, {"completed", r.completed}, {"total_ms", total}};
        if (generation) {
            j["prompt_tokens"] = r.usage.prompt_tokens;
            j["completion_tokens"] = r.usage.completion_tokens;
            j["ttft_ms"] = ttft >= 0 ? Json(ttft) : Json(nullptr);
        }
        return dump_json(j);
    }
    char buf[256];
    std::string line = utc_now() + " " + r.client + " " + r.method + " " + r.path;
    std::snprintf(buf, sizeof buf, " %d", r.status);
    line += buf;
    if (generation) {
        std::snprintf(buf, sizeof buf, " prompt=%lld completion=%lld", static_cast<long long>(r.usage.prompt_tokens),
                      static_cast<long long>(r.usage.completion_tokens));
        line += buf;
        if (ttft >= 0) {
            std::snprintf(buf, sizeof buf, " ttft_ms=%.1f", ttft);
            line += buf;
        }
    }
    std::snprintf(buf, sizeof buf, " total_ms=%.1f", total);
    line += buf;
    if (!r.completed) line += " aborted";
    return line;
}

}  // namespace tessera
