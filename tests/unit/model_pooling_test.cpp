// Embedding pooling (model/pooling.h): which positions each pooling reads,
// the pooled vector against a direct computation, the GGUF key and its
// default, and (with TESSERA_MODEL) that the hidden-state rows a forward pass
// returns do not depend on what else is in the batch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>

#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/pooling.h"

namespace tessera {
namespace {

std::vector<std::vector<float>> random_rows(int n, int width, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<std::vector<float>> rows(static_cast<size_t>(n), std::vector<float>(static_cast<size_t>(width)));
    for (auto& r : rows) {
        for (float& x : r) x = d(rng);
    }
    return rows;
}

double norm(const std::vector<float>& v) {
    double s = 0.0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

TEST(Pooling, ReadsThePositionsOfEachKind) {
    EXPECT_TRUE(pooling_reads(Pooling::Mean, 0, 5));
    EXPECT_TRUE(pooling_reads(Pooling::Mean, 4, 5));
    EXPECT_FALSE(pooling_reads(Pooling::Mean, 5, 5));
    EXPECT_TRUE(pooling_reads(Pooling::Cls, 0, 5));
    EXPECT_FALSE(pooling_reads(Pooling::Cls, 1, 5));
    EXPECT_TRUE(pooling_reads(Pooling::Last, 4, 5));
    EXPECT_FALSE(pooling_reads(Pooling::Last, 3, 5));
    EXPECT_FALSE(pooling_reads(Pooling::None, 0, 5));
    EXPECT_TRUE(pooling_allows_prefix_reuse(Pooling::Last));
    EXPECT_FALSE(pooling_allows_prefix_reuse(Pooling::Mean));
    EXPECT_FALSE(pooling_allows_prefix_reuse(Pooling::Cls));
}

TEST(Pooling, MeanIsTheNormalisedAverage) {
    const int width = 37;
    const auto rows = random_rows(11, width, 7);
    PoolingAccumulator acc(Pooling::Mean, width);
    for (const auto& r : rows) acc.add(r);
    EXPECT_EQ(acc.n_rows(), 11);
    const std::vector<float> got = acc.finish();
    std::vector<float> mean(width, 0.0f);
    for (const auto& r : rows) {
        for (int i = 0; i < width; ++i) mean[i] += r[i] / 11.0f;
    }
    const double m = norm(mean);
    ASSERT_EQ(got.size(), static_cast<size_t>(width));
    for (int i = 0; i < width; ++i) EXPECT_NEAR(got[i], mean[i] / m, 1e-6) << i;
    EXPECT_NEAR(norm(got), 1.0, 1e-6);
}

TEST(Pooling, ClsAndLastNormaliseTheirOneRow) {
    const auto rows = random_rows(1, 16, 3);
    for (Pooling p : {Pooling::Cls, Pooling::Last}) {
        PoolingAccumulator acc(p, 16);
        acc.add(rows[0]);
        const std::vector<float> got = acc.finish();
        const double n = norm(rows[0]);
        for (int i = 0; i < 16; ++i) EXPECT_NEAR(got[i], rows[0][i] / n, 1e-6);
    }
}

TEST(Pooling, ResetStartsOver) {
    const auto rows = random_rows(3, 8, 5);
    PoolingAccumulator acc(Pooling::Mean, 8);
    acc.add(rows[0]);
    acc.add(rows[1]);
    acc.reset();
    acc.add(rows[2]);
    EXPECT_EQ(acc.n_rows(), 1);
    const std::vector<float> got = acc.finish();
    const double n = norm(rows[2]);
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(got[i], rows[2][i] / n, 1e-6);
}

TEST(Pooling, AZeroVectorStaysZero) {
    PoolingAccumulator acc(Pooling::Last, 4);
    acc.add(std::vector<float>(4, 0.0f));
    for (float x : acc.finish()) EXPECT_EQ(x, 0.0f);
}

Expected<Pooling> pooling_of(std::optional<int32_t> value) {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    if (value) w.add_uint32("llama.pooling_type", static_cast<uint32_t>(*value));
    const std::vector<uint8_t> bytes = w.build();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    if (!file) return file.status();
    return model_pooling(*file, "llama");
}

TEST(Pooling, ComesFromTheGgufKeyWithLastAsTheDefault) {
    EXPECT_EQ(*pooling_of(std::nullopt), Pooling::Last);
    EXPECT_EQ(*pooling_of(1), Pooling::Mean);
    EXPECT_EQ(*pooling_of(2), Pooling::Cls);
    EXPECT_EQ(*pooling_of(3), Pooling::Last);
    EXPECT_EQ(*pooling_of(0), Pooling::None);
    EXPECT_FALSE(pooling_of(9).ok());
    EXPECT_TRUE(check_sentence_pooling(Pooling::Mean).ok());
    EXPECT_FALSE(check_sentence_pooling(Pooling::None).ok());
    EXPECT_FALSE(check_sentence_pooling(Pooling::Rank).ok());
    EXPECT_EQ(*parse_pooling("cls"), Pooling::Cls);
    EXPECT_FALSE(parse_pooling("max").ok());
}

// The hidden rows of a prompt are the same alone and in a batch with another
// sequence, whether or not logits are wanted too, and are the rows the LM
// head reads (the argmax of the logits row is unchanged by asking for both).
TEST(PoolingModel, HiddenRowsDoNotDependOnTheBatch) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (path == nullptr) GTEST_SKIP() << "TESSERA_MODEL not set";
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    Model& m = **model;
    const int64_t n_embd = m.config().n_embd;
    ThreadPool pool(2);
    KvCache cache = m.make_kv_cache(256);
    SoloSequence a(cache, 0, 4), b(cache, 4, 4);
    const std::vector<int32_t> prompt_a = {1, 510, 3012, 314, 260, 1345};
    const std::vector<int32_t> prompt_b = {1, 30, 31, 32};

    Batch alone;
    alone.add(a.block_table.data(), 0, prompt_a, false);
    std::fill(alone.want_hidden.begin(), alone.want_hidden.end(), 1);
    std::vector<float> logits, hidden_alone;
    ASSERT_TRUE(m.forward_batch(alone, cache, logits, pool, &hidden_alone).ok());
    EXPECT_TRUE(logits.empty());
    ASSERT_EQ(hidden_alone.size(), prompt_a.size() * static_cast<size_t>(n_embd));

    Batch mixed;
    mixed.add(b.block_table.data(), 0, prompt_b, true);
    mixed.add(a.block_table.data(), 0, prompt_a, true);
    std::fill(mixed.want_hidden.begin() + static_cast<long>(prompt_b.size()), mixed.want_hidden.end(), 1);
    std::vector<float> hidden_mixed;
    ASSERT_TRUE(m.forward_batch(mixed, cache, logits, pool, &hidden_mixed).ok());
    EXPECT_EQ(logits.size(), 2u * static_cast<size_t>(m.config().n_vocab));
    ASSERT_EQ(hidden_mixed.size(), hidden_alone.size());
    for (size_t i = 0; i < hidden_alone.size(); ++i) ASSERT_EQ(hidden_mixed[i], hidden_alone[i]) << i;
}

}  // namespace
}  // namespace tessera
