// The forward pass on the real default model against llama.cpp, over 20
// prompts (chat and raw, three over 1,000 tokens) and up to 64 generated
// tokens each. Golden file: tests/golden/generation/smollm2_q4_1.json, made by
// tools/gen_golden_generation.py (llama.cpp, F32 KV cache, greedy).
//
// Why not "the same 64 tokens, exactly": with 8-bit activation quantization
// this model is chaotic in float rounding order. Our own scalar and SIMD
// kernels (same math, different summation order) differ by up to 0.25 in
// logits, and llama.cpp's F16 and F32 KV caches by 0.4; both tessera and
// llama.cpp sit a median 0.2-0.3 away from a float64 reference. So greedy
// paths part at near-ties. The test therefore teacher-forces llama.cpp's
// tokens and checks, at every generated position:
//  - our argmax is llama.cpp's token, or llama.cpp itself rates our pick within
//    kTieMargin of its top token (a near-tie), and such ties are rare;
//  - the logits of llama.cpp's top-10 tokens are within kLogitTolerance, and
//    their median difference within kMedianTolerance.
// It also runs free greedy generation and reports how many cases reproduce
// llama.cpp's whole sequence.
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

constexpr float kTieMargin = 0.5f;
constexpr float kLogitTolerance = 2.0f;
constexpr float kMedianTolerance = 0.45f;
constexpr double kMaxTieFraction = 0.05;

nlohmann::json load_golden() {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/golden/generation/smollm2_q4_1.json");
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

int32_t argmax(const float* v, size_t n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

float llama_logit(const nlohmann::json& top, int32_t token) {
    for (const auto& pair : top) {
        if (pair[0].get<int32_t>() == token) return pair[1].get<float>();
    }
    return -INFINITY;  // not even in llama.cpp's top 10
}

struct Tally {
    int positions = 0;
    int ties = 0;
    int exact_cases = 0;
    int cases = 0;
    std::vector<float> diffs;
};

// Teacher-forced check of one case; returns the logits at the end of the prompt.
void check_teacher_forced(Model& model, const nlohmann::json& c, ThreadPool& pool, Tally& tally) {
    const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
    const auto expected = c["tokens"].get<std::vector<int32_t>>();
    const size_t n_vocab = static_cast<size_t>(model.config().n_vocab);
    KvCache cache = model.make_kv_cache(static_cast<int64_t>(prompt.size() + expected.size() + 1));
    SequenceKv seq;
    std::vector<float> first, rest;
    ASSERT_TRUE(model.forward(cache, seq, prompt, false, first, pool).ok());
    if (expected.size() > 1) {
        std::span<const int32_t> forced(expected.data(), expected.size() - 1);
        ASSERT_TRUE(model.forward(cache, seq, forced, true, rest, pool).ok());
    }
    for (size_t i = 0; i < expected.size(); ++i) {
        const float* row = i == 0 ? first.data() : rest.data() + (i - 1) * n_vocab;
        const auto& top = c["top_logits"][i];
        const int32_t ours = argmax(row, n_vocab);
        ++tally.positions;
        if (ours != expected[i]) {
            const float gap = top[0][1].get<float>() - llama_logit(top, ours);
            EXPECT_LT(gap, kTieMargin) << c["name"] << " position " << i << ": we pick " << ours
                                       << ", llama.cpp " << expected[i] << " by a margin of " << gap;
            ++tally.ties;
        }
        float worst = 0.0f;
        for (const auto& pair : top) {
            worst = std::max(worst, std::fabs(row[pair[0].get<size_t>()] - pair[1].get<float>()));
        }
        EXPECT_LT(worst, kLogitTolerance) << c["name"] << " position " << i;
        tally.diffs.push_back(worst);
    }
}

bool free_run_matches(Model& model, const nlohmann::json& c, const std::set<int32_t>& eog, ThreadPool& pool) {
    const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
    const auto expected = c["tokens"].get<std::vector<int32_t>>();
    KvCache cache = model.make_kv_cache(static_cast<int64_t>(prompt.size() + expected.size() + 1));
    SequenceKv seq;
    std::vector<float> logits;
    if (!model.forward(cache, seq, prompt, false, logits, pool).ok()) return false;
    for (size_t step = 0; step < expected.size(); ++step) {
        const int32_t tok = argmax(logits.data(), logits.size());
        if (tok != expected[step]) return false;
        if (eog.count(tok)) return step + 1 == expected.size();
        const int32_t next[1] = {tok};
        if (!model.forward(cache, seq, next, false, logits, pool).ok()) return false;
    }
    return true;
}

TEST(GenerationGolden, AgreesWithLlamaCppUpToNearTies) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    const bool sanitized = std::getenv("TESSERA_SANITIZED") != nullptr;
    nlohmann::json golden = load_golden();
    ASSERT_FALSE(golden.is_discarded());
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    const std::set<int32_t> eog = golden["eog_ids"].get<std::set<int32_t>>();
    ThreadPool pool(2);
    Tally tally;
    for (const auto& c : golden["cases"]) {
        // Under sanitizers the model runs ~20x slower: a few short cases only.
        if (sanitized && (c["prompt_tokens"].size() > 64 || tally.cases >= 3)) continue;
        ++tally.cases;
        check_teacher_forced(**model, c, pool, tally);
        if (!sanitized && free_run_matches(**model, c, eog, pool)) ++tally.exact_cases;
    }
    ASSERT_GT(tally.positions, 0);
    std::sort(tally.diffs.begin(), tally.diffs.end());
    const float median = tally.diffs[tally.diffs.size() / 2];
    EXPECT_LT(median, kMedianTolerance);
    // The rate of near-ties is a property of the whole set; the sanitizer
    // run's few short cases are too small a sample to bound it.
    if (!sanitized) {
        EXPECT_LE(tally.ties, static_cast<int>(kMaxTieFraction * tally.positions) + 1);
    }
    std::printf("[golden] %d cases, %d positions: %d near-tie picks, top-10 logit difference median %.3f max %.3f; "
                "free greedy run equals llama.cpp's in %d of %d cases\n",
                tally.cases, tally.positions, tally.ties, median, tally.diffs.back(), tally.exact_cases, tally.cases);
}

}  // namespace
}  // namespace tessera
