// The live key set and its usage report (key_registry.h).
#include "server/key_registry.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tessera {

KeyRegistry::KeyRegistry(const ApiKeys& keys, NowFn now) : now_(std::move(now)) { set(keys); }

void KeyRegistry::set(const ApiKeys& keys) {
    std::lock_guard<std::mutex> lock(mu_);  // held throughout: two reloads never interleave
    std::map<std::string, std::shared_ptr<KeyAccount>, std::less<>> old;
    if (current_) {
        for (const auto& a : current_->accounts) old.emplace(a->name(), a);
    }
    auto next = std::make_shared<Snapshot>();
    next->keys = keys;
    for (const KeySpec& spec : keys.specs()) {
        auto it = old.find(spec.name);
        if (it == old.end()) {
            next->accounts.push_back(std::make_shared<KeyAccount>(spec.name, spec.limits, now_));
            continue;
        }
        it->second->limiter().set_limits(spec.limits, now_());
        next->accounts.push_back(it->second);
    }
    current_ = std::move(next);
}

std::shared_ptr<const KeyRegistry::Snapshot> KeyRegistry::snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
}

std::optional<KeyRegistry::Caller> KeyRegistry::check(std::string_view authorization) const {
    const auto snap = snapshot();
    if (!snap->keys.enabled()) return Caller{};
    const std::optional<size_t> i = snap->keys.find(authorization);
    if (!i) return std::nullopt;
    return Caller{cache_salt_for(snap->keys.specs()[*i]), snap->accounts[*i]};
}

bool KeyRegistry::enabled() const { return snapshot()->keys.enabled(); }

std::vector<KeyUsageRow> KeyRegistry::usage() const {
    const auto snap = snapshot();
    std::vector<KeyUsageRow> rows;
    for (size_t i = 0; i < snap->accounts.size(); ++i) {
        const KeyAccount& a = *snap->accounts[i];
        rows.push_back({a.name(), snap->keys.specs()[i].group, a.limiter().limits(), a.limiter().streams(), a.usage()});
    }
    std::sort(rows.begin(), rows.end(), [](const KeyUsageRow& x, const KeyUsageRow& y) { return x.name < y.name; });
    return rows;
}

Json key_usage_json(const std::vector<KeyUsageRow>& rows) {
    Json data = Json::array();
    const auto limit = [](int64_t v) { return v > 0 ? Json(v) : Json(); };  // null: no limit
    for (const KeyUsageRow& r : rows) {
        data.push_back({{"name", r.name},
                        {"group", r.group.empty() ? Json() : Json(r.group)},
                        {"limits", {{"rpm", limit(r.limits.rpm)},
                                    {"tpm", limit(r.limits.tpm)},
                                    {"streams", limit(r.limits.streams)}}},
                        {"active_requests", r.active_requests},
                        {"requests", r.counts.requests},
                        {"prompt_tokens", r.counts.prompt_tokens},
                        {"cached_tokens", r.counts.cached_tokens},
                        {"completion_tokens", r.counts.completion_tokens},
                        {"rate_limited", r.counts.rate_limited}});
    }
    return {{"object", "list"}, {"data", std::move(data)}};
}

}  // namespace tessera
