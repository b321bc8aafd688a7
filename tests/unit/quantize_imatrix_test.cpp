// Importance matrices (quantize/imatrix.h): the GGUF layout round-trips,
// hostile files are refused with a message, and weighting the rounding
// error by column importance lowers the importance-weighted error of every
// format that uses it (tensor/quant.h), without changing unweighted output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <vector>

#include "gguf/gguf_writer.h"
#include "core/thread_pool.h"
#include "quantize/imatrix.h"
#include "quantize/quantize_model.h"
#include "tensor/quant.h"
#include "tensor_test_util.h"

namespace tessera {
namespace {

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

Imatrix sample_imatrix() {
    Imatrix m;
    m.datasets = {"calibration.txt"};
    m.chunk_count = 3;
    m.chunk_size = 128;
    m.tensors["blk.0.attn_q.weight"] = ImatrixTensor{4, 1, {1, 2, 3, 4}, {2}};
    m.tensors["blk.0.ffn_up_exps.weight"] = ImatrixTensor{2, 3, {1, 1, 2, 2, 0, 0}, {1, 4, 0}};
    return m;
}

TEST(Imatrix, RoundTripsThroughTheGgufLayout) {
    const auto path = std::filesystem::temp_directory_path() / "tessera_imatrix_test.gguf";
    ASSERT_TRUE(write_imatrix(sample_imatrix(), path.string()).ok());
    auto read = read_imatrix(path.string());
    std::filesystem::remove(path);
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_EQ(read->datasets, std::vector<std::string>{"calibration.txt"});
    EXPECT_EQ(read->chunk_count, 3u);
    EXPECT_EQ(read->chunk_size, 128u);
    ASSERT_EQ(read->tensors.size(), 2u);
    const ImatrixTensor& q = read->tensors.at("blk.0.attn_q.weight");
    EXPECT_EQ(q.column_means(0), (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
    const ImatrixTensor& up = read->tensors.at("blk.0.ffn_up_exps.weight");
    EXPECT_EQ(up.n_mat, 3);
    EXPECT_EQ(up.column_means(1), (std::vector<float>{0.5f, 0.5f}));
    EXPECT_TRUE(up.column_means(2).empty()) << "an expert that saw no input has no means";
}

// A file with general.type "imatrix" and the given tensors, parsed.
Expected<Imatrix> parse_with(const std::function<void(GgufWriter&)>& add, bool typed = true) {
    GgufWriter w;
    if (typed) w.add_string("general.type", "imatrix");
    add(w);
    const std::vector<uint8_t> bytes = w.build();  // parse_imatrix copies what it keeps
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    if (!file.ok()) return file.status();
    return parse_imatrix(file.value());
}

TEST(Imatrix, HostileFilesAreRefusedWithAMessage) {
    auto sum2 = [](GgufWriter& w, const std::string& name, std::vector<float> v, int64_t cols) {
        const auto n_mat = static_cast<int64_t>(v.size()) / cols;
        w.add_tensor(name + ".in_sum2", GgmlType::F32, {cols, n_mat}, f32_bytes(v));
    };
    auto counts = [](GgufWriter& w, const std::string& name, std::vector<float> v) {
        w.add_tensor(name + ".counts", GgmlType::F32, {1, static_cast<int64_t>(v.size())}, f32_bytes(v));
    };
    struct Case {
        const char* what;
        std::function<void(GgufWriter&)> add;
        bool typed;
        const char* message;
    };
    const Case cases[] = {
        {"no general.type", [&](GgufWriter& w) { sum2(w, "a", {1, 2}, 2), counts(w, "a", {1}); }, false,
         "not an importance matrix"},
        {"sums without counts", [&](GgufWriter& w) { sum2(w, "a", {1, 2}, 2); }, true, "no .counts partner"},
        {"counts without sums", [&](GgufWriter& w) { counts(w, "a", {1}); }, true, "no .in_sum2 partner"},
        {"negative sum", [&](GgufWriter& w) { sum2(w, "a", {1, -2}, 2), counts(w, "a", {1}); }, true, "negative"},
        {"NaN count", [&](GgufWriter& w) { sum2(w, "a", {1, 2}, 2), counts(w, "a", {NAN}); }, true, "non-finite"},
        {"counts for other experts", [&](GgufWriter& w) { sum2(w, "a", {1, 2, 3, 4}, 2), counts(w, "a", {1}); },
         true, "is not [1, 2]"},
        {"a stranger tensor", [&](GgufWriter& w) { w.add_tensor("a.weight", GgmlType::F32, {1, 1}, f32_bytes({1})); },
         true, "neither"},
        {"F16 sums", [&](GgufWriter& w) {
             w.add_tensor("a.in_sum2", GgmlType::F16, {2, 1}, std::vector<uint8_t>(4));
             counts(w, "a", {1});
         }, true, "not a 1-D or 2-D F32 tensor"},
    };
    for (const Case& c : cases) {
        auto parsed = parse_with(c.add, c.typed);
        ASSERT_FALSE(parsed.ok()) << c.what;
        EXPECT_NE(parsed.error().find(c.message), std::string::npos) << c.what << ": " << parsed.error();
    }
}

TEST(Imatrix, ReadsOneDimensionalEntriesAsLlamaImatrixWritesThem) {
    // llama-imatrix's [cols, 1] and [1, 1] tensors lose their trailing 1s.
    auto parsed = parse_with([](GgufWriter& w) {
        w.add_tensor("a.in_sum2", GgmlType::F32, {3}, f32_bytes({2, 4, 6}));
        w.add_tensor("a.counts", GgmlType::F32, {1}, f32_bytes({2}));
    });
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(parsed->tensors.at("a").column_means(0), (std::vector<float>{1, 2, 3}));
}

TEST(Imatrix, LegacyDatFilesGetAHint) {
    const auto path = std::filesystem::temp_directory_path() / "tessera_imatrix_legacy.dat";
    {
        std::FILE* f = std::fopen(path.string().c_str(), "wb");
        const int32_t n_entries = 0;
        std::fwrite(&n_entries, sizeof n_entries, 1, f);
        std::fclose(f);
    }
    auto read = read_imatrix(path.string());
    std::filesystem::remove(path);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().find("legacy .dat"), std::string::npos) << read.error();
}

// sum_i importance_i * (x_i - decoded_i)^2 over rows quantized with and
// without the importance.
struct WeightedErrors {
    double with = 0, without = 0;
};

WeightedErrors weighted_errors(GgmlType t) {
    constexpr int64_t kCols = 512;
    std::mt19937 rng(7);
    // Column importance spread over four orders of magnitude, as a real
    // model's mean squared activations are (a few outlier channels).
    std::vector<float> importance(kCols);
    std::lognormal_distribution<float> spread(0.0f, 2.0f);
    for (float& v : importance) v = spread(rng);
    WeightedErrors e;
    std::vector<uint8_t> q(*ggml_row_bytes(t, kCols));
    std::vector<float> y(kCols);
    for (int row = 0; row < 16; ++row) {
        const std::vector<float> x = test::random_floats(rng, kCols);
        for (const float* imp : {static_cast<const float*>(importance.data()), static_cast<const float*>(nullptr)}) {
            quantize_row_weights(t, x.data(), q.data(), kCols, imp);
            dequantize_row(t, q.data(), y.data(), kCols);
            double err = 0;
            for (int64_t i = 0; i < kCols; ++i) err += importance[i] * (x[i] - y[i]) * static_cast<double>(x[i] - y[i]);
            (imp ? e.with : e.without) += err;
        }
    }
    return e;
}

class WeightedQuantization : public ::testing::TestWithParam<GgmlType> {};

TEST_P(WeightedQuantization, ImportanceLowersTheWeightedError) {
    ASSERT_TRUE(uses_importance(GetParam()));
    const WeightedErrors e = weighted_errors(GetParam());
    // Measured from 0.31 (Q4_1) to 0.69 (Q6_K) of the unweighted error.
    EXPECT_LT(e.with, 0.8 * e.without) << ggml_type_name(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Types, WeightedQuantization,
                         ::testing::Values(GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                           GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                           GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(WeightedQuantization, UniformImportanceLeavesTheSearchedFormatsAsTheyWere) {
    constexpr int64_t kCols = 512;
    std::mt19937 rng(3);
    const std::vector<float> x = test::random_floats(rng, kCols), ones(kCols, 1.0f);
    for (GgmlType t : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL,
                       GgmlType::IQ4_XS}) {
        std::vector<uint8_t> plain(*ggml_row_bytes(t, kCols)), uniform(plain.size());
        quantize_row_weights(t, x.data(), plain.data(), kCols);
        quantize_row_weights(t, x.data(), uniform.data(), kCols, ones.data());
        EXPECT_EQ(plain, uniform) << ggml_type_name(t);
    }
    EXPECT_FALSE(uses_importance(GgmlType::Q8_0));
    EXPECT_FALSE(uses_importance(GgmlType::F16));
}

// quantize_model with a matrix for a 3-D expert tensor: each expert's rows
// are quantized with that expert's column means, a tensor with no entry
// unweighted, and a matrix whose shape does not fit is refused.
TEST(Imatrix, QuantizeModelWeightsEachExpertByItsOwnMeans) {
    constexpr int64_t kCols = 64, kRows = 2, kExperts = 2;
    std::mt19937 rng(11);
    const std::vector<float> experts = test::random_floats(rng, kCols * kRows * kExperts);
    const std::vector<float> dense = test::random_floats(rng, kCols * kRows);
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_uint32("llama.block_count", 1);
    w.add_tensor("blk.0.ffn_up_exps.weight", GgmlType::F32, {kCols, kRows, kExperts}, f32_bytes(experts));
    w.add_tensor("blk.0.attn_q.weight", GgmlType::F32, {kCols, kRows}, f32_bytes(dense));
    const auto dir = std::filesystem::temp_directory_path();
    const std::string in = (dir / "tessera_imatrix_moe_in.gguf").string();
    const std::string out = (dir / "tessera_imatrix_moe_out.gguf").string();
    ASSERT_TRUE(w.write_file(in).ok());

    // Expert 0 cares for the first half of the columns, expert 1 for the second.
    Imatrix m;
    ImatrixTensor t{kCols, kExperts, std::vector<float>(kCols * kExperts, 0.01f), {1, 2}};
    for (int64_t c = 0; c < kCols / 2; ++c) t.sum2[c] = 100.0f, t.sum2[kCols + kCols / 2 + c] = 200.0f;
    m.tensors["blk.0.ffn_up_exps.weight"] = t;
    QuantizeOptions options;
    options.mix = "Q4_0";
    options.imatrix = &m;
    ThreadPool pool(2);
    auto summary = quantize_model(in, out, options, pool, nullptr);
    ASSERT_TRUE(summary.ok()) << summary.error();
    EXPECT_EQ(summary->tensors_weighted, 1u);
    auto written = GgufFile::open(out);
    ASSERT_TRUE(written.ok()) << written.error();
    const size_t row_bytes = *ggml_row_bytes(GgmlType::Q4_0, kCols);
    std::vector<uint8_t> want(row_bytes);
    const GgufTensorInfo* q = written->find_tensor("blk.0.ffn_up_exps.weight");
    for (int64_t e = 0; e < kExperts; ++e) {
        const std::vector<float> means = t.column_means(e);
        for (int64_t r = 0; r < kRows; ++r) {
            const int64_t row = e * kRows + r;
            quantize_row_weights(GgmlType::Q4_0, experts.data() + row * kCols, want.data(), kCols, means.data());
            EXPECT_EQ(0, std::memcmp(q->data + row * row_bytes, want.data(), row_bytes))
                << "expert " << e << " row " << r;
        }
    }
    const GgufTensorInfo* plain = written->find_tensor("blk.0.attn_q.weight");
    for (int64_t r = 0; r < kRows; ++r) {
        quantize_row_weights(GgmlType::Q4_0, dense.data() + r * kCols, want.data(), kCols);
        EXPECT_EQ(0, std::memcmp(plain->data + r * row_bytes, want.data(), row_bytes)) << "no entry: unweighted";
    }

    m.tensors["blk.0.attn_q.weight"] = ImatrixTensor{kCols / 2, 1, std::vector<float>(kCols / 2, 1.0f), {1}};
    auto refused = quantize_model(in, out, options, pool, nullptr);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("made for another model"), std::string::npos) << refused.error();
    std::filesystem::remove(in);
    std::filesystem::remove(out);
}

}  // namespace
}  // namespace tessera
