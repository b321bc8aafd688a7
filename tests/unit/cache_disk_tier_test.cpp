// The KV disk tier on its own: round trips, the LRU bound, restart rebuild,
// and the untrusted-file cases (flipped bytes, a truncated file, a file
// written for another identity or layout) that must be ignored, never loaded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "cache/disk_tier.h"
#include "cache/prefix_cache.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

constexpr TierLayout kLayout{4, 100};
constexpr TierIdentity kId{1, 2};

std::vector<int32_t> run_of(int32_t k) { return {k, k + 1, k + 2, k + 3}; }
std::vector<uint8_t> kv_of(int32_t k) {
    std::vector<uint8_t> v(kLayout.block_bytes);
    std::iota(v.begin(), v.end(), static_cast<uint8_t>(k * 7));
    return v;
}
PrefixKey key_of(int32_t k) { return prefix_chain_key(prefix_root_key(0), run_of(k)); }

class DiskTierTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("tessera_disk_tier_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::unique_ptr<DiskTier> open(int64_t slots, TierIdentity id = kId, TierLayout layout = kLayout) {
        auto t = DiskTier::open(dir_.string(), id, layout, kTierHeaderBytes + slots * layout.record_bytes());
        EXPECT_TRUE(t.ok()) << t.error();
        return t.ok() ? std::move(*t) : nullptr;
    }
    static void store(DiskTier& t, int32_t k) { EXPECT_TRUE(t.store(key_of(k), run_of(k), kv_of(k))); }
    static bool loads(DiskTier& t, int32_t k) {
        const std::span<const uint8_t> kv = t.load(key_of(k), run_of(k));
        return !kv.empty() && std::vector<uint8_t>(kv.begin(), kv.end()) == kv_of(k);
    }
    static void flip_byte(const std::string& path, uint64_t offset) {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(static_cast<std::streamoff>(offset));
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x5A);
        f.seekp(static_cast<std::streamoff>(offset));
        f.write(&c, 1);
    }

    fs::path dir_;
};

TEST_F(DiskTierTest, StoresAndLoadsBlocks) {
    auto t = open(8);
    for (int32_t k = 0; k < 3; ++k) store(*t, k);
    EXPECT_EQ(t->n_blocks(), 3);
    for (int32_t k = 0; k < 3; ++k) EXPECT_TRUE(loads(*t, k)) << k;
    EXPECT_FALSE(t->contains(key_of(9)));
    EXPECT_TRUE(t->load(key_of(9), run_of(9)).empty());
    EXPECT_EQ(t->stats().stored, 3u);
    EXPECT_EQ(t->stats().loaded, 3u);
    EXPECT_EQ(t->bytes_used(), 3 * kLayout.record_bytes());
    store(*t, 1);  // already there: touched, not written again
    EXPECT_EQ(t->stats().stored, 3u);
}

TEST_F(DiskTierTest, TheTokenRunIsComparedExactly) {
    auto t = open(4);
    store(*t, 0);
    EXPECT_TRUE(t->load(key_of(0), run_of(5)).empty());  // a colliding key for another run
    EXPECT_EQ(t->stats().rejected, 0u);
    EXPECT_TRUE(loads(*t, 0));
}

TEST_F(DiskTierTest, EvictsTheLeastRecentlyUsedWhenFull) {
    auto t = open(3);
    for (int32_t k = 0; k < 3; ++k) store(*t, k);
    EXPECT_TRUE(loads(*t, 0));  // 1 is now the oldest
    store(*t, 3);
    EXPECT_EQ(t->n_blocks(), 3);
    EXPECT_FALSE(t->contains(key_of(1)));
    for (int32_t k : {0, 2, 3}) EXPECT_TRUE(loads(*t, k)) << k;
}

TEST_F(DiskTierTest, RestartRebuildsTheIndexInWriteOrder) {
    {
        auto t = open(3);
        for (int32_t k = 0; k < 3; ++k) store(*t, k);
    }
    auto t = open(3);
    EXPECT_EQ(t->n_blocks(), 3);
    EXPECT_EQ(t->stats().files_rejected, 0u);
    store(*t, 3);  // the first written goes first
    EXPECT_FALSE(t->contains(key_of(0)));
    for (int32_t k : {1, 2, 3}) EXPECT_TRUE(loads(*t, k)) << k;
    t.reset();
    auto smaller = open(1);  // a smaller size keeps the records that fit
    EXPECT_LE(smaller->n_blocks(), 1);
}

TEST_F(DiskTierTest, FlippedBytesAreRejectedNotLoaded) {
    std::string path;
    {
        auto t = open(4);
        for (int32_t k = 0; k < 3; ++k) store(*t, k);
        path = t->path();
    }
    const uint64_t record = kLayout.record_bytes();
    flip_byte(path, kTierHeaderBytes + 0 * record + kLayout.payload_offset() + 10);  // block 0's K/V
    flip_byte(path, kTierHeaderBytes + 1 * record + 20);                             // block 1's header
    flip_byte(path, kTierHeaderBytes + 2 * record + kRecordHeaderBytes);             // block 2's token run
    auto t = open(4);
    EXPECT_EQ(t->stats().rejected, 1u);  // the bad header, at open
    EXPECT_FALSE(t->contains(key_of(1)));
    EXPECT_FALSE(loads(*t, 0));
    EXPECT_FALSE(loads(*t, 2));
    EXPECT_EQ(t->stats().rejected, 3u);
    EXPECT_EQ(t->n_blocks(), 0);
    EXPECT_EQ(t->stats().loaded, 0u);
    t.reset();
    EXPECT_EQ(open(4)->stats().rejected, 0u);  // dropped records are cleared on disk
}

TEST_F(DiskTierTest, ATruncatedFileKeepsOnlyWholeRecords) {
    std::string path;
    {
        auto t = open(4);
        for (int32_t k = 0; k < 2; ++k) store(*t, k);
        path = t->path();
    }
    fs::resize_file(path, kTierHeaderBytes + kLayout.record_bytes() + kLayout.payload_offset() + 5);
    auto t = open(4);
    EXPECT_TRUE(loads(*t, 0));
    EXPECT_FALSE(loads(*t, 1));  // its header survived, its K/V did not
    EXPECT_EQ(t->stats().rejected, 1u);
    fs::resize_file(path, 100);  // not even a file header (while open: the next open sees it)
    t.reset();
    auto again = open(4);
    EXPECT_EQ(again->n_blocks(), 0);
    EXPECT_EQ(again->stats().files_rejected, 1u);
}

TEST_F(DiskTierTest, AFileOfAnotherIdentityOrLayoutIsIgnored) {
    std::string mine, theirs;
    {
        auto t = open(4);
        mine = t->path();
    }
    {
        auto t = open(4, TierIdentity{3, 4});
        store(*t, 0);
        theirs = t->path();
    }
    ASSERT_NE(mine, theirs);
    fs::copy_file(theirs, mine, fs::copy_options::overwrite_existing);
    auto t = open(4);
    EXPECT_EQ(t->n_blocks(), 0);
    EXPECT_EQ(t->stats().files_rejected, 1u);
    EXPECT_FALSE(loads(*t, 0));
    store(*t, 1);  // started afresh, and usable
    EXPECT_TRUE(loads(*t, 1));
    t.reset();
    auto other_layout = open(4, kId, TierLayout{4, 200});
    EXPECT_EQ(other_layout->stats().files_rejected, 1u);
    EXPECT_EQ(other_layout->n_blocks(), 0);
}

TEST_F(DiskTierTest, OneProcessAtATimeAndASizeThatHoldsABlock) {
    auto t = open(2);
    auto second = DiskTier::open(dir_.string(), kId, kLayout, kTierHeaderBytes + 2 * kLayout.record_bytes());
    EXPECT_FALSE(second.ok());
    auto tiny = DiskTier::open(dir_.string(), TierIdentity{7, 7}, kLayout, 4096);
    ASSERT_FALSE(tiny.ok());
    EXPECT_NE(tiny.error().find("holds no block"), std::string::npos) << tiny.error();
}

TEST(DiskTierFormatTest, HeadersRoundTripAndRejectDamage) {
    std::array<uint8_t, kTierHeaderBytes> file{};
    encode_tier_header(kId, kLayout, file);
    EXPECT_TRUE(check_tier_header(file, kId, kLayout).ok());
    EXPECT_FALSE(check_tier_header(file, TierIdentity{1, 3}, kLayout).ok());
    EXPECT_FALSE(check_tier_header(std::span<const uint8_t>(file).first(100), kId, kLayout).ok());
    file[9] ^= 1;  // the version
    EXPECT_NE(check_tier_header(file, kId, kLayout).message().find("version"), std::string::npos);

    std::array<uint8_t, kRecordHeaderBytes> rec{};
    const RecordHeader h{key_of(1), 42, 7};
    encode_record_header(h, kLayout, rec);
    RecordHeader back;
    ASSERT_TRUE(parse_record_header(rec, kLayout, back));
    EXPECT_EQ(back.key, h.key);
    EXPECT_EQ(back.stamp, 42u);
    EXPECT_FALSE(parse_record_header(rec, TierLayout{8, 100}, back));
    for (size_t i = 0; i < rec.size() - 8; ++i) {  // every byte the checksum covers
        auto bad = rec;
        bad[i] ^= 0x10;
        EXPECT_FALSE(parse_record_header(bad, kLayout, back)) << i;
    }
    EXPECT_EQ(TierLayout{}.record_bytes(), 0u);
    EXPECT_EQ((TierLayout{4, uint64_t{1} << 40}.record_bytes()), 0u);
}

// The prefix cache reports each block it evicts with the key of its whole
// prefix, leaf first, while the block is still held (its K/V intact).
TEST(PrefixCacheEvictObserverTest, ReportsPrefixKeysLeafFirst) {
    BlockPool pool(4);
    PrefixCache cache(pool, 2);
    const std::vector<int32_t> tokens = {1, 2, 3, 4};
    const std::vector<int32_t> blocks = {pool.allocate(), pool.allocate()};
    cache.insert(tokens, blocks, 7);
    for (int32_t b : blocks) pool.unref(b);
    std::vector<std::pair<PrefixKey, int32_t>> seen;
    cache.set_evict_observer([&](const PrefixKey& key, std::span<const int32_t> run, int32_t block) {
        EXPECT_EQ(pool.ref_count(block), 1);
        EXPECT_EQ(run.size(), 2u);
        seen.emplace_back(key, block);
    });
    EXPECT_EQ(cache.evict(10), 2);
    const PrefixKey first = prefix_chain_key(prefix_root_key(7), std::span<const int32_t>(tokens).first(2));
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].first, prefix_chain_key(first, std::span<const int32_t>(tokens).subspan(2)));
    EXPECT_EQ(seen[0].second, blocks[1]);
    EXPECT_EQ(seen[1].first, first);
    EXPECT_FALSE(first == prefix_chain_key(prefix_root_key(8), std::span<const int32_t>(tokens).first(2)));
}

}  // namespace
}  // namespace tessera
