// Renders the engine's metrics in the Prometheus text exposition format
// (version 0.0.4) for GET /metrics.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/metrics.h"
#include "model/moe_counters.h"
#include "server/key_account.h"

namespace tessera {

// One engine's metrics, labelled model="NAME" (empty name: no label).
struct MetricsSource {
    std::string model;
    const EngineMetrics* metrics = nullptr;
    const MoeCounters* moe = nullptr;  // expert usage (mixture-of-experts models); null: none
};

// Every family once, with one sample set per source (a server's models).
std::string render_prometheus(std::span<const MetricsSource> sources);

// One unlabelled engine. `moe`: the model's expert usage (mixture-of-experts models), rendered as
// tessera_moe_expert_tokens_total{expert="e"}, summed over layers; null: none.
std::string render_prometheus(const EngineMetrics& metrics, const MoeCounters* moe = nullptr);

// Per-key usage as tessera_key_*{key="name"} series (the key's name, never
// the key); empty without keys.
std::string render_key_usage(const std::vector<KeyUsageRow>& rows);

}  // namespace tessera
