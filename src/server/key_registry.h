// The server's live set of API keys, swapped whole on a key file reload
// (SIGHUP) while requests run: each key maps to its account, and an account
// whose name stays across a reload keeps its counters and bucket levels.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "server/api_keys.h"
#include "server/key_account.h"
#include "server/json_util.h"

namespace tessera {

class KeyRegistry {
public:
    explicit KeyRegistry(const ApiKeys& keys, NowFn now = [] { return LimiterClock::now(); });

    // Thread-safe; requests already admitted keep their accounts.
    void set(const ApiKeys& keys);

    struct Caller {
        uint64_t cache_salt = 0;               // 0 with authentication off
        std::shared_ptr<KeyAccount> account;  // null with authentication off
    };
    // The caller of `authorization`, or nullopt when its key is missing or
    // wrong (with authentication off, every request passes).
    std::optional<Caller> check(std::string_view authorization) const;

    bool enabled() const;
    std::vector<KeyUsageRow> usage() const;  // by name

private:
    struct Snapshot {
        ApiKeys keys;
        std::vector<std::shared_ptr<KeyAccount>> accounts;  // parallel to keys.specs()
    };
    std::shared_ptr<const Snapshot> snapshot() const;

    const NowFn now_;
    mutable std::mutex mu_;
    std::shared_ptr<const Snapshot> current_;
};

// GET /admin/usage's body: {"object": "list", "data": [one object per key]}.
Json key_usage_json(const std::vector<KeyUsageRow>& rows);

}  // namespace tessera
