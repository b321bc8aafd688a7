// llama.cpp's --kl-divergence-base file as tessera reads it: rows decoded as
// written, every corruption (truncation, padding, header, tokens, row
// scales) an error, and the full-vocabulary statistics on cases with known
// answers; tessera's writer of the same layout round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "eval/llama_kld_file.h"
#include "eval/logprob_stats.h"

namespace tessera {
namespace {

template <class T>
void put(std::vector<uint8_t>& out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(out.data() + at, &v, sizeof v);
}

// One row as llama.cpp's writer lays it out: scale, minimum, one u16 per
// token, padded to an even count.
void put_row(std::vector<uint8_t>& out, float scale, float min_log_prob, const std::vector<uint16_t>& q) {
    put(out, scale);
    put(out, min_log_prob);
    for (uint16_t v : q) put(out, v);
    if (q.size() % 2) put(out, uint16_t{0});
}

// n_ctx 4 (one scored position per chunk: position 2), 2 chunks, 3 tokens.
std::vector<uint8_t> small_file() {
    std::vector<uint8_t> f(8);
    std::memcpy(f.data(), LlamaKldFile::kMagic, 8);
    put(f, uint32_t{4});
    put(f, int32_t{3});
    put(f, int32_t{2});
    for (int32_t t : {1, 2, 0, 1, 1, 0, 2, 2}) put(f, t);
    put_row(f, 2.0f / 65535, -5.0f, {0, 0, 65535});  // log p = -5, -5, -3
    put_row(f, 0.0f, -1.0986123f, {0, 0, 0});
    return f;
}

TEST(LlamaKldFile, DecodesRowsAsWritten) {
    const auto bytes = small_file();
    auto f = LlamaKldFile::from_bytes(bytes);
    ASSERT_TRUE(f.ok()) << f.error();
    EXPECT_EQ(f->n_ctx(), 4u);
    EXPECT_EQ(f->n_vocab(), 3u);
    EXPECT_EQ(f->n_chunk(), 2u);
    EXPECT_EQ(f->n_positions(), 2u);
    EXPECT_EQ(f->tokens()[1], 2);
    EXPECT_EQ(f->tokens()[6], 2);
    std::vector<float> row;
    ASSERT_TRUE(f->read_row(0, row).ok());
    ASSERT_EQ(row.size(), 3u);
    EXPECT_FLOAT_EQ(row[0], -5.0f);
    EXPECT_FLOAT_EQ(row[1], -5.0f);
    EXPECT_NEAR(row[2], -3.0f, 1e-6);
    ASSERT_TRUE(f->read_row(1, row).ok());
    EXPECT_FLOAT_EQ(row[2], -1.0986123f);
    EXPECT_FALSE(f->read_row(2, row).ok());
}

TEST(LlamaKldFile, CorruptFilesAreErrors) {
    const auto good = small_file();
    const auto expect_error = [](std::vector<uint8_t> bytes, const char* what) {
        auto f = LlamaKldFile::from_bytes(bytes);
        EXPECT_FALSE(f.ok()) << what;
    };
    expect_error({}, "empty");
    expect_error(std::vector<uint8_t>(good.begin(), good.begin() + 10), "header cut");
    expect_error(std::vector<uint8_t>(good.begin(), good.end() - 1), "truncated by a byte");
    auto longer = good;
    longer.push_back(0);
    expect_error(longer, "a byte too many");
    const auto patched = [&](size_t at, auto v) {
        auto b = good;
        std::memcpy(b.data() + at, &v, sizeof v);
        return b;
    };
    expect_error(patched(0, uint8_t{'X'}), "magic");
    expect_error(patched(8, uint32_t{3}), "context too small");
    expect_error(patched(8, uint32_t{0xFFFFFFFF}), "context huge");
    expect_error(patched(12, int32_t{0}), "no vocabulary");
    expect_error(patched(12, int32_t{-7}), "negative vocabulary");
    expect_error(patched(16, int32_t{0}), "no chunks");
    expect_error(patched(16, int32_t{1 << 30}), "chunk count beyond the file");
    expect_error(patched(20, int32_t{3}), "token out of range");
    expect_error(patched(24, int32_t{-1}), "negative token");

    // Rows are checked when read.
    const size_t row0 = 20 + 8 * 4;
    for (float scale : {NAN, -1.0f, INFINITY, 1.0f}) {  // 1.0: the top token at 65535 nats
        const auto b = patched(row0, scale);
        auto f = LlamaKldFile::from_bytes(b);
        ASSERT_TRUE(f.ok());
        std::vector<float> row;
        EXPECT_FALSE(f->read_row(0, row).ok()) << scale;
    }
    for (float min : {NAN, 0.5f, -1e30f}) {
        const auto b = patched(row0 + 4, min);
        auto f = LlamaKldFile::from_bytes(b);
        ASSERT_TRUE(f.ok());
        std::vector<float> row;
        EXPECT_FALSE(f->read_row(0, row).ok()) << min;
    }
}

TEST(LlamaKldFile, MissingFileIsAnError) {
    auto f = LlamaKldFile::open("/nonexistent/ref.kld");
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.error().find("cannot open"), std::string::npos);
}

TEST(LlamaKldWriter, RoundTripsWithinTheGrid) {
    const std::string path = ::testing::TempDir() + "/roundtrip.kld";
    const std::vector<int32_t> tokens = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};  // 2 chunks of 5: 2 rows each
    auto w = LlamaKldWriter::create(path, 5, 5, tokens);
    ASSERT_TRUE(w.ok()) << w.error();
    const std::vector<std::vector<float>> rows = {{1, 2, 3, 4, 5}, {0, 0, 0, 0, 0}, {-30, 2, 2.5f, 9, 1}, {7, 6, 5, 4, 3}};
    for (uint64_t r : {3, 0, 2, 1}) ASSERT_TRUE(w->write_row(r, rows[r]).ok());  // any order
    EXPECT_FALSE(w->write_row(4, rows[0]).ok());
    EXPECT_FALSE(w->write_row(0, std::vector<float>{1, 2}).ok());
    auto f = LlamaKldFile::open(path);
    ASSERT_TRUE(f.ok()) << f.error();
    EXPECT_EQ(f->n_positions(), 4u);
    EXPECT_EQ(std::vector<int32_t>(f->tokens().begin(), f->tokens().end()), tokens);
    std::vector<float> lp;
    for (uint64_t r = 0; r < 4; ++r) {
        ASSERT_TRUE(f->read_row(r, lp).ok());
        const RowSummary s = summarize_row(rows[r]);
        const float max_logit = *std::max_element(rows[r].begin(), rows[r].end());
        for (size_t v = 0; v < 5; ++v) {
            const double exact = rows[r][v] - s.log_sum_exp;
            if (rows[r][v] > max_logit - 16) {
                EXPECT_NEAR(lp[v], exact, 16.0 / 65535) << r << " " << v;  // half a grid step, and f32
            } else {
                EXPECT_LE(lp[v], -16.0f);  // below the grid: at its floor, left out of the KL
            }
        }
    }
}

TEST(FullVocabKl, KnownValues) {
    // Reference p = (0.5, 0.25, 0.25); model logits giving q = (0.25, 0.5, 0.25).
    const std::vector<float> ref = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
    const std::vector<float> logits = {std::log(0.25f) + 3, std::log(0.5f) + 3, std::log(0.25f) + 3};
    const RowSummary row = summarize_row(logits);
    EXPECT_NEAR(kl_full(ref, logits, row), 0.5 * std::log(2.0) + 0.25 * std::log(0.5), 1e-6);
    EXPECT_NEAR(kl_full(ref, ref, summarize_row(ref)), 0.0, 1e-7);
    // Reference tokens 16 nats down are left out, as llama.cpp does.
    const std::vector<float> with_tail = {0.0f, -16.0f, -20.0f};
    EXPECT_NEAR(kl_full(with_tail, logits, row), -(std::log(0.25) + 0.0), 1e-6);
    EXPECT_EQ(argmax(std::vector<float>{1, 3, 3, 2}), 1);
}

TEST(ReferenceComparison, LlamaCppDefinitions) {
    ReferenceComparison c;
    // p_model - p_ref of the true token: +0.1 and -0.3 alternately.
    for (int i = 0; i < 20; ++i) {
        const bool even = i % 2 == 0;
        c.add(even ? 0.1 : 0.3, even, -std::log(even ? 0.6 : 0.2), -std::log(even ? 0.5 : 0.5));
    }
    EXPECT_EQ(c.count(), 20);
    EXPECT_NEAR(c.kl_mean().value, 0.2, 1e-12);
    EXPECT_NEAR(c.kl_mean().error, std::sqrt(0.01 / 19), 1e-9);
    EXPECT_NEAR(c.kl().median, 0.2, 1e-12);  // the mean of the middle two
    EXPECT_NEAR(c.kl().p99, 0.3, 1e-12);
    EXPECT_NEAR(c.same_top().value, 0.5, 1e-12);
    EXPECT_NEAR(c.same_top().error, std::sqrt(0.25 / 19), 1e-9);
    EXPECT_NEAR(c.p_diff_mean().value, -0.1, 1e-9);
    EXPECT_NEAR(c.p_diff_rms().value, std::sqrt(0.05), 1e-9);
    EXPECT_NEAR(c.reference_perplexity().perplexity(), 2.0, 1e-9);
}

}  // namespace
}  // namespace tessera
