// Expert usage in /metrics: the MoE counters rendered per expert, summed over
// layers; nothing about experts for a dense model.
#include <gtest/gtest.h>

#include <string>

#include "model/moe_counters.h"
#include "server/prometheus.h"

namespace tessera {
namespace {

TEST(ModelMoeMetrics, ExpertTokensArePrometheusCountersPerExpert) {
    EngineMetrics m;
    MoeCounters moe(2, 3);
    moe.record_pass(0, 2, 5);
    moe.record_pass(1, 2, 4);
    moe.record_pass(1, 0, 1);
    const std::string text = render_prometheus(m, &moe);
    auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
    EXPECT_TRUE(has("# TYPE tessera_moe_expert_tokens_total counter"));
    EXPECT_TRUE(has("tessera_moe_expert_tokens_total{expert=\"0\"} 1"));
    EXPECT_TRUE(has("tessera_moe_expert_tokens_total{expert=\"1\"} 0"));
    EXPECT_TRUE(has("tessera_moe_expert_tokens_total{expert=\"2\"} 9"));
    EXPECT_EQ(render_prometheus(m).find("tessera_moe_"), std::string::npos);
}

}  // namespace
}  // namespace tessera
