// `tessera bench`: llama-bench-style speed figures for one model: prompt
// processing, single-stream decode at several context depths, batched decode
// of many sequences through forward_batch, the decode roofline ratio
// against a measured memory-read bandwidth, and the prompt and batch
// compute ratio against a measured int8 multiply-add peak. Mean ± stddev
// over repetitions.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "kernels/dot_kernels.h"
#include "kernels/int8_peak.h"
#include "kernels/mem_bandwidth.h"
#include "model/model.h"

namespace tessera {
namespace {

struct BenchOptions {
    std::string model_path;
    int n_prompt = 512;
    int n_gen = 128;
    std::vector<int> batch_seqs{1, 8, 32};
    int batch_prompt = 128;
    std::vector<int> depths{0};
    int reps = 3;
    int threads = default_threads();
    bool json = false;
    bool single = true;
    double bw_mib = 512;
    int peak_reps = 5;
    KvTypes kv_types{};
};

struct Result {
    std::string test;  // "pp512", "tg128 @ d4096", "batch 32 x tg128"
    int n_prompt = 0, n_gen = 0, depth = 0, n_seqs = 1;
    std::vector<double> tps;  // tokens per second of each repetition
    double mean() const {
        double s = 0;
        for (double v : tps) s += v;
        return s / static_cast<double>(tps.size());
    }
    double stddev() const {
        if (tps.size() < 2) return 0.0;
        const double m = mean();
        double s = 0;
        for (double v : tps) s += (v - m) * (v - m);
        return std::sqrt(s / static_cast<double>(tps.size() - 1));
    }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A mixture-of-experts layer's FFN matrices one token uses, measured by
// `size`: the router, its k experts (all experts are the same size) and the
// shared expert if any. Zero for a dense layer.
template <class Size>
double moe_ffn_share(const Model& m, const LayerWeights& l, const Size& size) {
    const ExpertWeights& e = l.moe;
    if (e.gate.empty()) return 0.0;
    double shared = e.gate_shexp.data ? size(e.gate_inp_shexp) + size(e.gate_shexp) + size(e.up_shexp) +
                                            size(e.down_shexp)
                                      : 0.0;
    return size(e.gate_inp) + m.config().n_expert_used * (size(e.gate[0]) + size(e.up[0]) + size(e.down[0])) + shared;
}

// Bytes of weights one decode step streams: every layer matrix (of an MoE
// layer, the router and the k experts a token uses), the output head, and
// (negligible) one embedding row.
double weight_bytes_per_token(const Model& m) {
    auto bytes = [](const WeightMatrix& w) { return static_cast<double>(w.rows) * static_cast<double>(w.row_bytes); };
    double total = bytes(m.weights().output) + static_cast<double>(m.weights().token_embd.row_bytes);
    for (const LayerWeights& l : m.weights().layers) {
        total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.w_gate) + bytes(l.w_up) +
                 bytes(l.w_down) + moe_ffn_share(m, l, bytes);
    }
    return total;
}

// Multiply-adds of the weight matrices per token: the layers' and, given
// `head_share` (the share of tokens that need logits), the output head's.
// Attention's float work is left out, so the ceiling it sets is generous.
double matmul_macs_per_token(const Model& m, double head_share) {
    auto macs = [](const WeightMatrix& w) { return static_cast<double>(w.rows) * static_cast<double>(w.cols); };
    double total = head_share * macs(m.weights().output);
    for (const LayerWeights& l : m.weights().layers) {
        total += macs(l.wq) + macs(l.wk) + macs(l.wv) + macs(l.wo) + macs(l.w_gate) + macs(l.w_up) + macs(l.w_down) +
                 moe_ffn_share(m, l, macs);
    }
    return total;
}

// The share of the int8 peak a test's tokens per second take in matmul
// multiply-adds (prompts need logits for their last token only, batched
// steps for every token); 0 for single-stream decode (bandwidth-bound: see
// the roofline) or without a peak.
double compute_ratio(const Model& m, const Result& r, double peak) {
    if (peak <= 0 || (r.n_gen > 0 && r.n_seqs == 1)) return 0.0;
    const double head_share = r.n_gen > 0 ? 1.0 : 1.0 / r.n_prompt;
    return r.mean() * matmul_macs_per_token(m, head_share) / peak;
}

// Every test first runs untimed repetitions, as llama-bench does: they fault
// the weight mapping in, size the workspace and KV cache, and warm what the
// test's own path uses. One 8-token forward pass before all tests left the
// first timed decode repetition 15-25% slower on two threads.
constexpr int kWarmupReps = 1;

class Bench {
public:
    Bench(Model& model, const BenchOptions& o) : model_(model), o_(o), pool_(o.threads), rng_(1234) {}

    std::vector<int32_t> random_tokens(int n) {
        std::uniform_int_distribution<int32_t> dist(0, model_.config().n_vocab - 1);
        std::vector<int32_t> t(static_cast<size_t>(n));
        for (auto& v : t) v = dist(rng_);
        return t;
    }

    Status prompt(Result& r) {
        KvCache cache = model_.make_kv_cache(o_.n_prompt, o_.kv_types);
        const auto tokens = random_tokens(o_.n_prompt);
        for (int rep = -kWarmupReps; rep < o_.reps; ++rep) {
            SoloSequence seq(cache);
            const auto t0 = std::chrono::steady_clock::now();
            TS_RETURN_IF_ERROR(model_.forward(cache, seq, tokens, false, logits_, pool_));
            if (rep >= 0) r.tps.push_back(o_.n_prompt / seconds_since(t0));
        }
        return Status();
    }

    // The context is filled to `depth` once (untimed); each repetition then
    // decodes n_gen tokens and rewinds to depth, overwriting the same slots.
    Status decode(int depth, Result& r) {
        KvCache cache = model_.make_kv_cache(depth + o_.n_gen, o_.kv_types);
        SoloSequence seq(cache);
        if (depth > 0) TS_RETURN_IF_ERROR(model_.forward(cache, seq, random_tokens(depth), false, logits_, pool_));
        const auto tokens = random_tokens(o_.n_gen);
        for (int rep = -kWarmupReps; rep < o_.reps; ++rep) {
            seq.n_tokens = depth;
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < o_.n_gen; ++i) {
                TS_RETURN_IF_ERROR(model_.forward(cache, seq, std::span(&tokens[i], 1), false, logits_, pool_));
            }
            if (rep >= 0) r.tps.push_back(o_.n_gen / seconds_since(t0));
        }
        return Status();
    }

    // n_seqs sequences, each prefilled with batch_prompt tokens (untimed),
    // then n_gen steps that decode one token of every sequence in one pass.
    Status batched(int n_seqs, Result& r) {
        const int64_t slots = static_cast<int64_t>(n_seqs) * (o_.batch_prompt + o_.n_gen + 16);
        KvCache cache = model_.make_kv_cache(slots, o_.kv_types);
        const int bs = cache.block_size();
        const int per_seq = static_cast<int>((o_.batch_prompt + o_.n_gen + bs - 1) / bs);
        if (static_cast<int64_t>(per_seq) * n_seqs > cache.n_blocks()) return Status::error("bench: KV cache too small");
        std::vector<SoloSequence> seqs;
        for (int k = 0; k < n_seqs; ++k) seqs.emplace_back(cache, k * per_seq, per_seq);
        for (auto& s : seqs) {
            TS_RETURN_IF_ERROR(model_.forward(cache, s, random_tokens(o_.batch_prompt), false, logits_, pool_));
        }
        const auto tokens = random_tokens(n_seqs);
        Batch batch;
        for (int rep = -kWarmupReps; rep < o_.reps; ++rep) {
            for (auto& s : seqs) s.n_tokens = o_.batch_prompt;
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < o_.n_gen; ++i) {
                batch.clear();
                for (int k = 0; k < n_seqs; ++k) {
                    batch.add(seqs[k].block_table.data(), seqs[k].n_tokens, std::span(&tokens[k], 1), true);
                }
                TS_RETURN_IF_ERROR(model_.forward_batch(batch, cache, logits_, pool_));
                for (auto& s : seqs) ++s.n_tokens;
            }
            if (rep >= 0) r.tps.push_back(static_cast<double>(n_seqs) * o_.n_gen / seconds_since(t0));
        }
        return Status();
    }

    ThreadPool& pool() { return pool_; }

private:
    Model& model_;
    const BenchOptions& o_;
    ThreadPool pool_;
    std::mt19937 rng_;
    std::vector<float> logits_;
};

// Share of the model file mapped on 2 MiB pages (core/mapped_file.h says why
// it matters to decode speed); 0 for an empty or unmapped file.
double huge_page_fraction(const Model& model) {
    const MappedFile* map = model.gguf().mapping();
    if (map == nullptr || map->size() == 0) return 0.0;
    return static_cast<double>(map->huge_page_bytes()) / static_cast<double>(map->size());
}

void print_table(const Model& model, const BenchOptions& o, const std::vector<Result>& results, double bw,
                 double wbytes, double peak) {
    std::printf("model: %s (%s, %d layers, n_embd %d)\n", o.model_path.c_str(), model.config().arch.c_str(),
                model.config().n_layer, model.config().n_embd);
    std::printf("threads: %d, kernels: %s, repetitions: %d, KV cache: K %s, V %s\n", o.threads,
                simd_level_name(best_simd_level()), o.reps, kv_type_name(o.kv_types.k).c_str(),
                kv_type_name(o.kv_types.v).c_str());
    const double huge = 100.0 * huge_page_fraction(model);
    std::printf("weights read per decode token: %.1f MiB (model file %.0f%% on 2 MiB pages); memory read "
                "bandwidth: %.2f GB/s\n",
                wbytes / (1024.0 * 1024.0), huge, bw / 1e9);
    if (peak > 0) {
        std::printf("int8 multiply-add peak: %.1f G/s; prompt ceiling at that peak (layer matmuls alone): %.0f t/s\n",
                    peak / 1e9, peak / matmul_macs_per_token(model, 0.0));
    }
    std::printf("\n| %-24s | %16s | %9s | %9s |\n", "test", "t/s", "roofline", "compute");
    std::printf("|%s|%s|%s|%s|\n", std::string(26, '-').c_str(), std::string(18, '-').c_str(),
                std::string(11, '-').c_str(), std::string(11, '-').c_str());
    for (const Result& r : results) {
        char tps[64], roof[32] = "", compute[32] = "";
        std::snprintf(tps, sizeof tps, "%.2f ± %.2f", r.mean(), r.stddev());
        if (bw > 0 && r.n_gen > 0 && r.n_seqs == 1) std::snprintf(roof, sizeof roof, "%.2f", r.mean() * wbytes / bw);
        if (const double c = compute_ratio(model, r, peak); c > 0) std::snprintf(compute, sizeof compute, "%.2f", c);
        std::printf("| %-24s | %17s | %9s | %9s |\n", r.test.c_str(), tps, roof, compute);  // "±" is 2 bytes
    }
}

void print_json(const Model& model, const BenchOptions& o, const std::vector<Result>& results, double bw,
                double wbytes, double peak) {
    nlohmann::json j;
    j["model"] = o.model_path;
    j["arch"] = model.config().arch;
    j["threads"] = o.threads;
    j["kernels"] = simd_level_name(best_simd_level());
    j["repetitions"] = o.reps;
    j["cache_type_k"] = kv_type_name(o.kv_types.k);
    j["cache_type_v"] = kv_type_name(o.kv_types.v);
    j["read_bandwidth_gbs"] = bw / 1e9;
    j["weight_bytes_per_token"] = wbytes;
    j["model_huge_page_fraction"] = huge_page_fraction(model);
    j["int8_peak_macs"] = peak;
    j["matmul_macs_per_prompt_token"] = matmul_macs_per_token(model, 0.0);
    j["results"] = nlohmann::json::array();
    for (const Result& r : results) {
        nlohmann::json e{{"test", r.test},     {"n_prompt", r.n_prompt}, {"n_gen", r.n_gen},
                         {"depth", r.depth},   {"n_seqs", r.n_seqs},     {"tps_mean", r.mean()},
                         {"tps_stddev", r.stddev()}, {"tps", r.tps}};
        if (bw > 0 && r.n_gen > 0 && r.n_seqs == 1) e["roofline"] = r.mean() * wbytes / bw;
        if (const double c = compute_ratio(model, r, peak); c > 0) e["compute"] = c;
        j["results"].push_back(e);
    }
    std::printf("%s\n", j.dump(2).c_str());
}

}  // namespace

int cmd_bench(int argc, char** argv) {
    CLI::App app{"Measure prompt, decode and batched-decode speed", "bench"};
    BenchOptions o;
    app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
    app.add_option("-p,--n-prompt", o.n_prompt, "prompt tokens (0 skips the test)")->check(CLI::Range(0, 1 << 20));
    app.add_option("-n,--n-gen", o.n_gen, "decode tokens per test")->check(CLI::Range(1, 1 << 20));
    app.add_option("-b,--batch", o.batch_seqs, "batched-decode sequence counts (0 skips)")
        ->delimiter(',')->check(CLI::Range(0, 4096));
    app.add_option("--batch-prompt", o.batch_prompt, "prompt tokens of each batched sequence")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("-d,--depth", o.depths, "context depths for single-stream decode")
        ->delimiter(',')->check(CLI::Range(0, 1 << 22));
    app.add_option("-r,--reps", o.reps, "repetitions of each test")->check(CLI::Range(1, 1000));
    app.add_option("-t,--threads", o.threads, "compute threads")->check(CLI::Range(1, 256));
    app.add_option("--bw-mib", o.bw_mib, "buffer size of the bandwidth probe (MiB, 0 skips)")
        ->check(CLI::Range(0.0, 65536.0));
    app.add_option("--peak-reps", o.peak_reps, "repetitions of the int8 multiply-add peak probe (0 skips)")
        ->check(CLI::Range(0, 1000));
    app.add_flag("!--no-single", o.single, "skip the single-stream decode tests");
    app.add_flag("--json", o.json, "print JSON instead of a table");
    add_kv_type_flags(app, o.kv_types);
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto loaded = Model::load(o.model_path);
    if (!loaded) {
        std::fprintf(stderr, "tessera bench: %s\n", loaded.error().c_str());
        return 1;
    }
    Model& model = **loaded;
    if (Status st = check_kv_types(o.kv_types, model.config().head_dim); !st.ok()) {
        std::fprintf(stderr, "tessera bench: %s\n", st.message().c_str());
        return 1;
    }
    Bench bench(model, o);
    std::vector<Result> results;
    auto fail = [](const Status& st) {
        std::fprintf(stderr, "tessera bench: %s\n", st.message().c_str());
        return 1;
    };
    if (o.n_prompt > 0) {
        Result r{"pp" + std::to_string(o.n_prompt), o.n_prompt, 0, 0, 1, {}};
        if (Status st = bench.prompt(r); !st.ok()) return fail(st);
        results.push_back(r);
    }
    for (int d : o.single ? o.depths : std::vector<int>{}) {
        Result r{"tg" + std::to_string(o.n_gen) + (d ? " @ d" + std::to_string(d) : ""), 0, o.n_gen, d, 1, {}};
        if (Status st = bench.decode(d, r); !st.ok()) return fail(st);
        results.push_back(r);
    }
    for (int b : o.batch_seqs) {
        if (b == 0) continue;
        Result r{std::to_string(b) + " seqs x tg" + std::to_string(o.n_gen) + " @ d" + std::to_string(o.batch_prompt),
                 o.batch_prompt, o.n_gen, o.batch_prompt, b, {}};
        if (Status st = bench.batched(b, r); !st.ok()) return fail(st);
        results.push_back(r);
    }
    const double bw =
        o.bw_mib > 0 ? measure_read_bandwidth(bench.pool(), static_cast<size_t>(o.bw_mib * 1024 * 1024), 5) : 0.0;
    const double peak = o.peak_reps > 0 ? measure_int8_peak(bench.pool(), best_simd_level(), o.peak_reps) : 0.0;
    const double wbytes = weight_bytes_per_token(model);
    if (o.json) {
        print_json(model, o, results, bw, wbytes, peak);
    } else {
        print_table(model, o, results, bw, wbytes, peak);
    }
    return 0;
}

}  // namespace tessera
