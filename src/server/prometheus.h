// Renders the engine's metrics in the Prometheus text exposition format
// (version 0.0.4) for GET /metrics.
#pragma once

#include <string>

#include "engine/metrics.h"

namespace tessera {

std::string render_prometheus(const EngineMetrics& metrics);

}  // namespace tessera
