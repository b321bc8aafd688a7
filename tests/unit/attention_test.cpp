// attention_batch (GQA grouping, context splitting, scalar/AVX2/AVX-512 range
// kernels) against the scalar reference attend_head, for every K/V storage
// type (F32, F16, BF16, Q8_0 and mixed pairs), on odd shapes: contexts that
// are not a multiple of the block size, single tokens, GQA 9/3, MQA, head_dim
// 32/64/96/128 and widths no vector level supports, shuffled block tables,
// block sizes that are and are not multiples of the vector width (K is read
// keys in lanes, a vector of keys at a time, invalid lanes masked); a
// prefill row bit-identical to the same token alone or in another run, and
// a last run read from the upper half of a block; sliding windows,
// soft-capped scores and attention sinks against a brute-force softmax.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tensor/kv_type.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

const KvTypes kAllTypes[] = {{GgmlType::F32, GgmlType::F32},   {GgmlType::F16, GgmlType::F16},
                             {GgmlType::BF16, GgmlType::BF16}, {GgmlType::Q8_0, GgmlType::Q8_0},
                             {GgmlType::Q8_0, GgmlType::F16},  {GgmlType::F16, GgmlType::BF16}};

// K and V pools of n_slots positions holding random values encoded as
// `types`, K keys in lanes as KvCache stores it.
struct Pools {
    std::vector<uint8_t> k, v;
    PagedKv kv;
};

Pools random_pools(KvTypes types, int64_t n_slots, int kv_dim, int block_size, std::mt19937& rng) {
    std::normal_distribution<float> nd(0.0f, 1.0f);
    Pools p;
    const int64_t kb = kv_row_bytes(types.k, kv_dim), vb = kv_row_bytes(types.v, kv_dim);
    // The padding holds NaNs: lanes read past the keys must not leak into results.
    p.k.assign(static_cast<size_t>(n_slots * kb + kKeysInLanesPadBytes), 0xff);
    p.v.resize(static_cast<size_t>(n_slots * vb));
    std::vector<float> row(static_cast<size_t>(kv_dim));
    std::vector<uint8_t> k_row(static_cast<size_t>(kb));
    for (int64_t slot = 0; slot < n_slots; ++slot) {
        for (auto& x : row) x = nd(rng);
        quantize_row(types.k, row.data(), k_row.data(), kv_dim);
        scatter_k_row(types.k, k_row.data(), 0, kb, block_size, static_cast<int>(slot % block_size),
                      p.k.data() + slot / block_size * block_size * kb);
        for (auto& x : row) x = nd(rng);
        quantize_row(types.v, row.data(), p.v.data() + slot * vb, kv_dim);
    }
    p.kv = PagedKv{p.k.data(), p.v.data(), types.k, types.v, kb, vb, nullptr, block_size, kv_dim};
    return p;
}

// A block table of blocks 0, 1, ... (entries are slots: block * block_size).
std::vector<int32_t> whole_blocks(int64_t n_blocks, int block_size) {
    std::vector<int32_t> table(static_cast<size_t>(n_blocks));
    for (size_t b = 0; b < table.size(); ++b) table[b] = static_cast<int32_t>(b) * block_size;
    return table;
}

std::string types_name(KvTypes t) { return kv_type_name(t.k) + "/" + kv_type_name(t.v); }

struct Case {
    int n_head, n_head_kv, head_dim, block_size;
    std::vector<std::pair<int64_t, int32_t>> runs;  // (pos0, n_tokens) per sequence
};

void check_case(const Case& c, KvTypes types, ThreadPool& pool, SimdLevel level) {
    std::mt19937 rng(7 + c.n_head * 31 + c.head_dim);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const int kv_dim = c.n_head_kv * c.head_dim, q_dim = c.n_head * c.head_dim;
    // Each sequence gets its own blocks, handed out in a shuffled order.
    std::vector<int64_t> blocks_per_seq;
    int64_t n_blocks = 0;
    for (auto [pos0, n] : c.runs) {
        blocks_per_seq.push_back((pos0 + n + c.block_size - 1) / c.block_size);
        n_blocks += blocks_per_seq.back();
    }
    std::vector<int32_t> order(static_cast<size_t>(n_blocks));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::vector<int32_t>> tables(blocks_per_seq.size());
    size_t next = 0;
    for (size_t s = 0; s < tables.size(); ++s) {
        for (int64_t b = 0; b < blocks_per_seq[s]; ++b) tables[s].push_back(order[next++] * c.block_size);
    }
    const Pools pools = random_pools(types, n_blocks * c.block_size, kv_dim, c.block_size, rng);
    std::vector<AttnSeq> seqs;
    int32_t n_tok = 0;
    for (size_t s = 0; s < c.runs.size(); ++s) {
        seqs.push_back(AttnSeq{tables[s].data(), c.runs[s].first, n_tok, c.runs[s].second});
        n_tok += c.runs[s].second;
    }
    const size_t n_q = static_cast<size_t>(n_tok) * q_dim;
    std::vector<float> q(n_q), out(n_q), ref(n_q);
    for (auto& x : q) x = 2.0f * nd(rng);  // peaked softmax: mistakes show
    const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    AttentionScratch scratch;
    attention_batch(shape, pools.kv, seqs, q.data(), out.data(), pool, scratch, level);
    for (const AttnSeq& s : seqs) {
        PagedKv kv = pools.kv;
        kv.block_table = s.block_table;
        for (int32_t t = 0; t < s.n_tokens; ++t) {
            for (int h = 0; h < c.n_head; ++h) {
                const int64_t off = static_cast<int64_t>(s.first + t) * q_dim + h * c.head_dim;
                attend_head(shape, kv, q.data() + off, h, s.pos0 + t + 1, ref.data() + off);
            }
        }
    }
    for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_NEAR(out[i], ref[i], 2e-5f * (1.0f + std::fabs(ref[i])))
            << "element " << i << " level " << simd_level_name(level) << " types " << types_name(types) << " heads "
            << c.n_head << "/" << c.n_head_kv << " head_dim " << c.head_dim << " block " << c.block_size
            << " threads " << pool.size();
    }
}

TEST(AttentionTest, BatchMatchesReferenceOnOddShapes) {
    const std::vector<Case> cases = {
        {9, 3, 64, 16, {{0, 1}}},                          // first token alone
        {9, 3, 64, 16, {{36, 1}}},                         // decode, context 37
        {9, 3, 64, 16, {{0, 45}, {100, 1}, {7, 3}}},       // prefill + decodes
        {4, 4, 128, 16, {{0, 19}, {600, 1}}},              // MHA, long decode (split)
        {8, 1, 64, 7, {{0, 13}, {1000, 2}}},               // MQA, odd block size
        {32, 4, 64, 16, {{2100, 1}}},                      // 1.1B-like GQA 8
        {6, 2, 24, 16, {{0, 9}, {300, 1}}},                // width AVX-512 cannot take
        {2, 1, 12, 5, {{0, 11}, {40, 1}}},                 // width no SIMD level takes
        {6, 3, 96, 16, {{0, 21}, {530, 2}}},               // 96: no unrolled V path
        {4, 2, 32, 9, {{0, 5}, {77, 1}}},                  // one Q8_0 block per head
        {9, 3, 64, 40, {{0, 50}, {90, 1}}},                // blocks of 2.5 AVX-512 vectors
        {4, 1, 64, 256, {{0, 3}, {700, 1}}},               // the largest blocks, partly filled
    };
    ThreadPool pool1(1), pool3(3);
    for (KvTypes types : kAllTypes) {
        for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
            for (const Case& c : cases) {
                if (!check_kv_types(types, c.head_dim).ok()) continue;  // Q8_0 needs head_dim % 32 == 0
                check_case(c, types, pool1, static_cast<SimdLevel>(lv));
                check_case(c, types, pool3, static_cast<SimdLevel>(lv));
            }
        }
    }
}

TEST(AttentionTest, StoredTypesStayCloseToF32) {
    // The same random K/V stored as F32 and as each other type: the output
    // moves by about the type's rounding (F16 ~1e-3, BF16 and Q8_0 ~1e-2).
    const int hd = 64, n_head = 9, n_kv = 3, bs = 16, kv_dim = n_kv * hd, q_dim = n_head * hd;
    const int64_t ctx = 300, n_blocks = (ctx + bs - 1) / bs;
    const std::vector<int32_t> table = whole_blocks(n_blocks, bs);
    std::vector<float> q(q_dim);
    std::mt19937 qrng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto& x : q) x = nd(qrng);
    const AttentionShape shape{n_head, n_kv, hd, 0.125f};
    ThreadPool pool(1);
    AttentionScratch scratch;
    auto run = [&](KvTypes types) {
        std::mt19937 rng(3);  // same values whatever the type
        const Pools p = random_pools(types, n_blocks * bs, kv_dim, bs, rng);
        std::vector<float> out(q_dim);
        attention_batch(shape, p.kv, {AttnSeq{table.data(), ctx - 1, 0, 1}}, q.data(), out.data(), pool, scratch,
                        best_simd_level());
        return out;
    };
    const std::vector<float> f32 = run({GgmlType::F32, GgmlType::F32});
    for (KvTypes types : kAllTypes) {
        const std::vector<float> out = run(types);
        float worst = 0.0f;
        for (int i = 0; i < q_dim; ++i) worst = std::max(worst, std::fabs(out[i] - f32[i]));
        const bool coarse = types.k == GgmlType::BF16 || types.k == GgmlType::Q8_0 || types.v == GgmlType::BF16 ||
                            types.v == GgmlType::Q8_0;
        EXPECT_LT(worst, coarse ? 3e-2f : 3e-3f) << types_name(types);
        if (types.k != GgmlType::F32) {
            EXPECT_GT(worst, 0.0f) << types_name(types) << ": nothing was rounded?";
        }
    }
}

TEST(AttentionTest, RowDoesNotDependOnBatchOrThreads) {
    // A long decode row alone (split over pieces) and the same row inside a
    // batch of other sequences, on 1 and 3 threads: bit-identical, for every
    // storage type.
    const int hd = 64, n_head = 9, n_kv = 3, bs = 16, kv_dim = n_kv * hd, q_dim = n_head * hd;
    const int64_t ctx = 1500, n_blocks = (ctx + bs - 1) / bs + 8;
    const std::vector<int32_t> table = whole_blocks(n_blocks, bs);
    const AttentionShape shape{n_head, n_kv, hd, 0.125f};
    AttentionScratch scratch;
    ThreadPool pool1(1), pool3(3);
    for (KvTypes types : kAllTypes) {
        std::mt19937 rng(99);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const Pools p = random_pools(types, n_blocks * bs, kv_dim, bs, rng);
        std::vector<float> q(static_cast<size_t>(5) * q_dim);
        for (auto& x : q) x = nd(rng);
        std::vector<float> alone(q_dim), batched(q.size());
        attention_batch(shape, p.kv, {AttnSeq{table.data(), ctx - 1, 0, 1}}, q.data(), alone.data(), pool1, scratch,
                        best_simd_level());
        // The same sequence as the last token of a 4-token run, after another sequence.
        const std::vector<AttnSeq> seqs = {AttnSeq{table.data(), 10, 0, 1}, AttnSeq{table.data(), ctx - 4, 1, 4}};
        std::copy(q.begin(), q.begin() + q_dim, q.begin() + 4 * q_dim);
        attention_batch(shape, p.kv, seqs, q.data(), batched.data(), pool3, scratch, best_simd_level());
        for (int i = 0; i < q_dim; ++i) ASSERT_EQ(alone[i], batched[4 * q_dim + i]) << i << " " << types_name(types);
    }
}

// Heads and block size, and one sequence's run of tokens [pos0, pos0 + n_tokens).
struct RunShape {
    int n_head, n_head_kv, head_dim, block_size;
    int64_t pos0;
    int32_t n_tokens;
};

TEST(AttentionTest, PrefillRowsMatchEachTokenAlone) {
    // Prefill ranges tile the rows of several tokens together on blocks left
    // of the causal diagonal and go token by token on the diagonal; a tile
    // visits several blocks at a time. A row
    // must come out bit-identical to the same token alone (a decode) and to
    // the token inside a run cut differently, for every storage type, block
    // size and SIMD level, on 1 and 3 threads.
    const RunShape shapes[] = {
        {9, 3, 64, 16, 0, 37},    // SmolLM2: group 3, tiles of two tokens
        {9, 3, 64, 16, 5, 23},    // run starting inside a block
        {32, 4, 64, 16, 3, 13},   // group 8: a tile is less than a token
        {4, 4, 32, 16, 0, 19},    // MHA: one row per token and KV head
        {9, 3, 64, 40, 17, 31},   // blocks of 2.5 AVX-512 vectors
        {4, 1, 64, 256, 250, 11}, // the largest blocks, diagonal crossing one
        {6, 2, 96, 7, 490, 29},   // odd blocks, 96 wide, context split at 512
        {9, 3, 64, 40, 505, 30},  // split at 520, inside a visit of several blocks
        {9, 3, 64, 16, 100, 70},  // several visits left of the diagonal per piece
        {32, 4, 64, 16, 200, 9},  // group 8, long context, four tokens a piece
        {5, 5, 64, 16, 130, 5},   // 5-row tiles x 8 blocks: maxes / sums reduced 16 + 16 + 8
    };
    ThreadPool pool1(1), pool3(3);
    for (const RunShape& c : shapes) {
        const int kv_dim = c.n_head_kv * c.head_dim, q_dim = c.n_head * c.head_dim;
        const int64_t n_blocks = (c.pos0 + c.n_tokens + c.block_size - 1) / c.block_size;
        std::vector<int32_t> table = whole_blocks(n_blocks, c.block_size);
        std::mt19937 trng(11);
        std::shuffle(table.begin(), table.end(), trng);
        const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
        AttentionScratch scratch;
        for (KvTypes types : kAllTypes) {
            if (!check_kv_types(types, c.head_dim).ok()) continue;
            std::mt19937 rng(21);
            std::normal_distribution<float> nd(0.0f, 1.0f);
            const Pools p = random_pools(types, n_blocks * c.block_size, kv_dim, c.block_size, rng);
            std::vector<float> q(static_cast<size_t>(c.n_tokens) * q_dim);
            for (auto& x : q) x = 2.0f * nd(rng);
            for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
                const auto level = static_cast<SimdLevel>(lv);
                std::vector<float> run(q.size()), cut(q.size()), alone(q_dim);
                attention_batch(shape, p.kv, {AttnSeq{table.data(), c.pos0, 0, c.n_tokens}}, q.data(), run.data(),
                                pool1, scratch, level);
                // The same run as 3 tokens, then the rest: other pieces and tiles.
                const std::vector<AttnSeq> halves = {AttnSeq{table.data(), c.pos0, 0, 3},
                                                     AttnSeq{table.data(), c.pos0 + 3, 3, c.n_tokens - 3}};
                attention_batch(shape, p.kv, halves, q.data(), cut.data(), pool3, scratch, level);
                for (int32_t t = 0; t < c.n_tokens; ++t) {
                    const float* qt = q.data() + static_cast<size_t>(t) * q_dim;
                    attention_batch(shape, p.kv, {AttnSeq{table.data(), c.pos0 + t, 0, 1}}, qt, alone.data(),
                                    t % 2 ? pool3 : pool1, scratch, level);
                    for (int i = 0; i < q_dim; ++i) {
                        const size_t x = static_cast<size_t>(t) * q_dim + i;
                        ASSERT_EQ(run[x], alone[i]) << "token " << t << " element " << i << " level "
                                                     << simd_level_name(level) << " types " << types_name(types)
                                                     << " heads " << c.n_head << "/" << c.n_head_kv << " block "
                                                     << c.block_size;
                        ASSERT_EQ(run[x], cut[x]) << "token " << t << " element " << i << " (cut run)";
                    }
                }
            }
        }
    }
}

TEST(AttentionTest, LastRunInAnUpperHalfBlockMatchesAWholeBlock) {
    // The scheduler keeps a sequence's short last run in half a block, so it
    // may start mid-block (sched/block_tables.h). The same K/V copied into
    // the upper half of a spare block, whose lower half holds other keys,
    // must give bit-identical rows for decodes and prefill runs, at every
    // SIMD level and storage type.
    const RunShape shapes[] = {
        {9, 3, 64, 16, 36, 1},   // decode, last run of 5
        {9, 3, 64, 16, 39, 1},   // decode, a full half
        {9, 3, 64, 16, 32, 1},   // decode, first key of the half
        {9, 3, 64, 16, 27, 10},  // prefill run ending 5 keys into the half
        {32, 4, 64, 8, 17, 2},   // halves of 4 keys (half an AVX2 vector)
        {6, 2, 96, 6, 12, 2},    // odd half of 3
        {9, 3, 64, 40, 50, 4},   // half of 20 keys, more than a vector
    };
    ThreadPool pool(2);
    AttentionScratch scratch;
    for (const RunShape& c : shapes) {
        const int bs = c.block_size, half = bs / 2, kv_dim = c.n_head_kv * c.head_dim, q_dim = c.n_head * c.head_dim;
        const int64_t ctx = c.pos0 + c.n_tokens, n_blocks = (ctx + bs - 1) / bs, tail = ctx - (n_blocks - 1) * bs;
        ASSERT_LE(tail, half);
        const std::vector<int32_t> whole = whole_blocks(n_blocks, bs);
        std::vector<int32_t> halved = whole;
        halved.back() = static_cast<int32_t>(n_blocks * bs + half);  // upper half of spare block n_blocks
        const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
        for (KvTypes types : kAllTypes) {
            if (!check_kv_types(types, c.head_dim).ok()) continue;
            std::mt19937 rng(31);
            std::normal_distribution<float> nd(0.0f, 1.0f);
            Pools p = random_pools(types, (n_blocks + 1) * bs, kv_dim, bs, rng);
            const int64_t kb = p.kv.k_row_bytes, vb = p.kv.v_row_bytes;
            std::vector<uint8_t> row(static_cast<size_t>(kb));
            for (int j = 0; j < tail; ++j) {
                const int64_t from = whole.back() + j, to = halved.back() + j;
                gather_k_row(types.k, p.k.data() + from / bs * bs * kb, 0, kb, bs, static_cast<int>(from % bs), row.data());
                scatter_k_row(types.k, row.data(), 0, kb, bs, static_cast<int>(to % bs), p.k.data() + to / bs * bs * kb);
                std::copy_n(p.v.data() + from * vb, vb, p.v.data() + to * vb);
            }
            std::vector<float> q(static_cast<size_t>(c.n_tokens) * q_dim);
            for (auto& x : q) x = 2.0f * nd(rng);
            for (int lv = 0; lv <= static_cast<int>(best_simd_level()); ++lv) {
                const auto level = static_cast<SimdLevel>(lv);
                std::vector<float> a(q.size()), b(q.size());
                attention_batch(shape, p.kv, {AttnSeq{whole.data(), c.pos0, 0, c.n_tokens}}, q.data(), a.data(), pool,
                                scratch, level);
                attention_batch(shape, p.kv, {AttnSeq{halved.data(), c.pos0, 0, c.n_tokens}}, q.data(), b.data(),
                                pool, scratch, level);
                for (size_t i = 0; i < a.size(); ++i) {
                    ASSERT_EQ(a[i], b[i]) << "element " << i << " level " << simd_level_name(level) << " types "
                                          << types_name(types) << " block " << bs << " tail " << tail;
                }
                // And the scalar reference reads the half too.
                PagedKv kv = p.kv;
                kv.block_table = halved.data();
                std::vector<float> ref(static_cast<size_t>(c.head_dim));
                attend_head(shape, kv, q.data() + (c.n_tokens - 1) * q_dim, 0, ctx, ref.data());
                for (int d = 0; d < c.head_dim; ++d) {
                    ASSERT_NEAR(ref[d], a[(c.n_tokens - 1) * q_dim + d], 2e-5f * (1.0f + std::fabs(ref[d])));
                }
            }
        }
    }
}

TEST(AttentionTest, SlidingWindowSoftcapAndSinksMatchBruteForce) {
    // Gemma's options: a query at position p sees positions > p - window, and
    // scores may be soft-capped (the scalar kernel) or not (the SIMD ones);
    // gpt-oss's per-head sink logits join each softmax's denominator. A
    // ragged batch (a prefill run crossing the 512-position split, a decode
    // token, a short run) on 3 threads, against softmax written out in double
    // over the same F32 keys and values; also attend_head (the scalar
    // reference) for the decode token.
    const int hd = 32, n_head = 4, n_kv = 2, bs = 16, kv_dim = n_kv * hd, q_dim = n_head * hd;
    const int64_t n_slots = 48 * bs;
    const std::vector<int32_t> table = whole_blocks(48, bs);
    std::mt19937 rng(21);
    const Pools p = random_pools({GgmlType::F32, GgmlType::F32}, n_slots, kv_dim, bs, rng);
    std::mt19937 same(21);  // random_pools' draws again: K row, then V row, per slot
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> keys(static_cast<size_t>(n_slots) * kv_dim), values(keys.size());
    for (int64_t s = 0; s < n_slots; ++s) {
        for (int d = 0; d < kv_dim; ++d) keys[s * kv_dim + d] = nd(same);
        for (int d = 0; d < kv_dim; ++d) values[s * kv_dim + d] = nd(same);
    }
    // Sinks around the scores' range: one far above (that head's output shrinks
    // towards 0), one far below (no effect), two in between. The last case has
    // no window (gpt-oss's full layers): the long contexts are then split into
    // pieces whose partial sums are merged, where the sinks join.
    const std::vector<float> sinks = {8.0f, -30.0f, 0.5f, 2.0f};
    struct Case {
        float softcap;
        bool with_sinks;
        int64_t window;
    };
    for (const auto& [softcap, with_sinks, window] :
         {Case{2.0f, false, 37}, Case{0.0f, false, 37}, Case{2.0f, true, 37}, Case{0.0f, true, 37},
          Case{0.0f, true, 0}}) {
        AttentionShape shape{n_head, n_kv, hd, 0.3f};
        shape.window = window;
        shape.softcap = softcap;
        shape.sinks = with_sinks ? sinks.data() : nullptr;
        // All three sequences share the block table: each reads positions of its own.
        const std::vector<AttnSeq> seqs = {AttnSeq{table.data(), 500, 0, 20}, AttnSeq{table.data(), 700, 20, 1},
                                           AttnSeq{table.data(), 3, 21, 6}};
        const int n_tok = 27;
        std::vector<float> q(static_cast<size_t>(n_tok) * q_dim), out(q.size());
        for (auto& x : q) x = 2.0f * nd(rng);
        ThreadPool pool(3);
        AttentionScratch scratch;
        attention_batch(shape, p.kv, seqs, q.data(), out.data(), pool, scratch, best_simd_level());
        for (const AttnSeq& sq : seqs) {
            for (int i = 0; i < sq.n_tokens; ++i) {
                const int64_t pos = sq.pos0 + i, t = sq.first + i;
                const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
                for (int h = 0; h < n_head; ++h) {
                    const int kvh = h / (n_head / n_kv);
                    const float* qh = q.data() + t * q_dim + h * hd;
                    std::vector<double> sc;
                    for (int64_t j = first; j <= pos; ++j) {
                        double dot = 0;
                        for (int d = 0; d < hd; ++d) dot += double(qh[d]) * keys[j * kv_dim + kvh * hd + d];
                        sc.push_back(softcap > 0 ? softcap * std::tanh(dot * 0.3 / softcap) : dot * 0.3);
                    }
                    const double mx = *std::max_element(sc.begin(), sc.end());
                    double sum = 0;
                    for (double& x : sc) sum += (x = std::exp(x - mx));
                    if (with_sinks) sum += std::exp(sinks[h] - mx);
                    for (int d = 0; d < hd; ++d) {
                        double want = 0;
                        for (int64_t j = first; j <= pos; ++j) {
                            want += sc[j - first] * values[j * kv_dim + kvh * hd + d];
                        }
                        want /= sum;
                        ASSERT_NEAR(out[t * q_dim + h * hd + d], want, 1e-5)
                            << "pos " << pos << " head " << h << " softcap " << softcap << " sinks " << with_sinks
                            << " window " << window;
                    }
                }
            }
        }
        // The scalar reference agrees on the decode token (position 700).
        PagedKv kv = p.kv;
        kv.block_table = table.data();
        std::vector<float> head_out(hd);
        for (int h = 0; h < n_head; ++h) {
            attend_head(shape, kv, q.data() + 20 * q_dim + h * hd, h, 701, head_out.data());
            for (int d = 0; d < hd; ++d) ASSERT_NEAR(head_out[d], out[20 * q_dim + h * hd + d], 1e-5);
        }
    }
}

TEST(AttentionTest, FindRangeKernelFallsBackOnUnsupportedWidths) {
    for (KvTypes t : kAllTypes) {
        EXPECT_NE(find_attend_range(best_simd_level(), 12, t.k, t.v), nullptr);
        EXPECT_NE(find_attend_range(SimdLevel::Scalar, 64, t.k, t.v), nullptr);
    }
}

}  // namespace
}  // namespace tessera
