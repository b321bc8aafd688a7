// The forward pass on the real default model against llama.cpp: for each of
// 20 prompts (chat and raw, three over 1,000 tokens), greedy generation from
// llama.cpp's prompt ids must give llama.cpp's tokens, and at the first
// positions the top-1 token must agree and the logits of llama.cpp's top-10
// tokens must lie within kLogitTolerance. Golden file:
// tests/golden/generation/smollm2_q4_1.json (tools/gen_golden_generation.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "model/model.h"

namespace tessera {
namespace {

// llama.cpp quantizes activations and K/V the same way, but sums in another
// order (SIMD lanes, tiles); measured differences are far below this.
constexpr float kLogitTolerance = 0.1f;

nlohmann::json load_golden() {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/golden/generation/smollm2_q4_1.json");
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

int32_t argmax(const std::vector<float>& v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST(GenerationGolden, GreedyTokensMatchLlamaCpp) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    const bool sanitized = std::getenv("TESSERA_SANITIZED") != nullptr;
    nlohmann::json golden = load_golden();
    ASSERT_FALSE(golden.is_discarded());
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    const std::set<int32_t> eog = golden["eog_ids"].get<std::set<int32_t>>();
    ThreadPool pool(2);
    float worst = 0.0f;
    int n_cases = 0;
    for (const auto& c : golden["cases"]) {
        const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
        const auto expected = c["tokens"].get<std::vector<int32_t>>();
        // Under sanitizers the long prompts would take minutes: run short ones.
        if (sanitized && (prompt.size() > 64 || n_cases >= 4)) continue;
        ++n_cases;
        KvCache cache = (*model)->make_kv_cache(static_cast<int64_t>(prompt.size() + expected.size() + 1));
        SequenceKv seq;
        std::vector<float> logits;
        ASSERT_TRUE((*model)->forward(cache, seq, prompt, false, logits, pool).ok());
        std::vector<int32_t> got;
        for (size_t step = 0; step < expected.size(); ++step) {
            const int32_t tok = argmax(logits);
            if (step < c["top_logits"].size()) {
                const auto& top = c["top_logits"][step];
                EXPECT_EQ(tok, top[0][0].get<int32_t>()) << c["name"] << " position " << step;
                for (const auto& pair : top) {
                    const float diff = std::fabs(logits[pair[0].get<size_t>()] - pair[1].get<float>());
                    worst = std::max(worst, diff);
                    EXPECT_LT(diff, kLogitTolerance) << c["name"] << " position " << step;
                }
            }
            got.push_back(tok);
            if (eog.count(tok)) break;
            const int32_t next[1] = {tok};
            ASSERT_TRUE((*model)->forward(cache, seq, next, false, logits, pool).ok());
        }
        EXPECT_EQ(got, expected) << c["name"];
    }
    std::printf("[golden] %d cases, worst top-10 logit difference %.4f\n", n_cases, worst);
}

}  // namespace
}  // namespace tessera
