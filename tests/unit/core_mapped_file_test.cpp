// Model files changed under a running process: a file cut short while it is
// mapped must fail the load with a message (not SIGBUS), one cut short while
// the engine serves it must fail requests (not the process), and a file whose
// weights are overwritten in place after loading must not crash generation.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "huge_page_probe.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class TempFile {
public:
    explicit TempFile(const std::string& stem)
        : path_((fs::temp_directory_path() / (stem + "-" + std::to_string(getpid()))).string()) {}
    ~TempFile() { std::remove(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

void write_bytes(const std::string& path, size_t n) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    std::vector<char> bytes(n, 'x');
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Whether a bare mapping of a freshly read 8 MiB file of its own gets 2 MiB
// pages here (huge_page_probe.h): where it does, MappedFile must too.
bool kernel_gives_fresh_files_huge_pages() {
    TempFile probe("tessera-huge-probe");
    write_bytes(probe.path(), 8u << 20);
    const size_t huge = test::probe_fresh_read_huge_bytes(probe.path(), 8u << 20);
    std::printf("[mapped file] probe: %zu of %u bytes of a bare mapping on 2 MiB pages\n", huge, 8u << 20);
    return huge > 0;
}

constexpr const char* kNoHugePages =
    "a bare mapping of a freshly read file gets no 2 MiB pages on this kernel and filesystem: "
    "only the report's shape was checked, the 2 MiB page path was not exercised";

TEST(MappedFileTest, WholeFileMapsAndPopulates) {
    TempFile f("tessera-mapped");
    write_bytes(f.path(), 3 * 4096 + 17);
    auto m = MappedFile::open(f.path());
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->size(), 3u * 4096 + 17);
    EXPECT_TRUE(m->populate().ok());
    EXPECT_EQ(m->data()[3 * 4096 + 16], 'x');
}

TEST(MappedFileTest, FileTruncatedAfterMappingIsAnErrorNotSigbus) {
    TempFile f("tessera-truncated");
    write_bytes(f.path(), 64 * 4096);
    auto m = MappedFile::open(f.path());
    ASSERT_TRUE(m.ok()) << m.error();
    ASSERT_EQ(truncate(f.path().c_str(), 4096), 0);
    Status s = m->populate();
    ASSERT_FALSE(s.ok()) << "a shrunk file went unnoticed";
    EXPECT_NE(s.message().find("shorter than when it was opened"), std::string::npos) << s.message();
    // The pages that still exist remain readable.
    EXPECT_EQ(m->data()[100], 'x');
}

TEST(MappedFileTest, EmptyFileHasNothingToPopulate) {
    TempFile f("tessera-empty");
    write_bytes(f.path(), 0);
    auto m = MappedFile::open(f.path());
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->size(), 0u);
    EXPECT_TRUE(m->populate().ok());
}

// Whether the kernel gives the mapping 2 MiB pages depends on the filesystem
// and on how the file is cached: the report is whole 2 MiB pages, never more
// than the mapping, and where a bare mapping gets 2 MiB pages (the probe) at
// least half the file is on them, allowing for memory too fragmented at the
// moment for some 2 MiB folios. The file is written, flushed and dropped from
// the page cache first, so on a filesystem with large folios the mapping's
// own read builds them (printed for the record).
TEST(MappedFileTest, HugePageShareIsWholePagesWithinTheMapping) {
    TempFile f("tessera-huge");
    const size_t size = 8u << 20;
    write_bytes(f.path(), size);
    const int fd = ::open(f.path().c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    auto m = MappedFile::open(f.path());
    ASSERT_TRUE(m.ok()) << m.error();
    const size_t huge = m->huge_page_bytes();
    EXPECT_LE(huge, size);
    EXPECT_EQ(huge % (2u << 20), 0u) << huge;
    std::printf("[mapped file] %zu of %zu bytes on 2 MiB pages\n", huge, size);
    if (!kernel_gives_fresh_files_huge_pages()) GTEST_SKIP() << kNoHugePages;
    EXPECT_GE(huge, size / 2);
}

// A file sitting in the page cache as written (small folios) is read back
// by open() onto 2 MiB pages wherever the kernel gives a freshly read file
// them (the test above's state): at least half as many of them, allowing for
// memory too fragmented at the moment for some 2 MiB folios.
TEST(MappedFileTest, FileCachedAsWrittenIsReadBackOnHugePages) {
    TempFile fresh("tessera-fresh"), written("tessera-written");
    const size_t size = 8u << 20;
    write_bytes(fresh.path(), size);
    write_bytes(written.path(), size);
    for (const std::string* path : {&fresh.path(), &written.path()}) {
        const int fd = ::open(path->c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        fsync(fd);  // clean pages: the as-written ones can be dropped
        if (path == &fresh.path()) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
    auto read_fresh = MappedFile::open(fresh.path());
    ASSERT_TRUE(read_fresh.ok()) << read_fresh.error();
    auto as_written = MappedFile::open(written.path());
    ASSERT_TRUE(as_written.ok()) << as_written.error();
    EXPECT_GE(as_written->huge_page_bytes(), read_fresh->huge_page_bytes() / 2);
    EXPECT_EQ(as_written->data()[size - 1], 'x');
    std::printf("[mapped file] as written: %zu, freshly read: %zu of %zu bytes on 2 MiB pages\n",
                as_written->huge_page_bytes(), read_fresh->huge_page_bytes(), size);
    if (!kernel_gives_fresh_files_huge_pages()) GTEST_SKIP() << kNoHugePages;
    EXPECT_GE(read_fresh->huge_page_bytes(), size / 2);
    EXPECT_GE(as_written->huge_page_bytes(), size / 2);
}

// Overwriting a loaded model's tensor data in place (MAP_PRIVATE shows other
// writers' changes to pages it has not copied) turns weights into garbage,
// possibly NaN or Inf; generation must still end normally with ids in range.
TEST(MappedFileTest, WeightsOverwrittenInPlaceAfterLoadDoNotCrash) {
    const char* model_path = std::getenv("TESSERA_MODEL");
    if (!model_path) GTEST_SKIP() << "TESSERA_MODEL not set";
    TempFile f("tessera-overwritten.gguf");
    fs::copy_file(model_path, f.path(), fs::copy_options::overwrite_existing);
    auto model = Model::load(f.path());
    ASSERT_TRUE(model.ok()) << model.error();
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();

    const auto size = static_cast<size_t>(fs::file_size(f.path()));
    const int fd = open(f.path().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const std::vector<uint8_t> garbage(1 << 20, 0xFF);  // 0xFF halves are f16 NaN scales
    for (size_t off = size / 4; off + garbage.size() < size; off += 4 * garbage.size()) {
        ASSERT_EQ(pwrite(fd, garbage.data(), garbage.size(), static_cast<off_t>(off)),
                  static_cast<ssize_t>(garbage.size()));
    }
    close(fd);

    const std::vector<int32_t> prompt = tokenizer->encode("The capital of France is", {.add_special = true});

    // The serving engine: the request ends (error or not), the engine lives on.
    auto engine = Engine::start(**model, *tokenizer, EngineOptions{.threads = 2});
    ASSERT_TRUE(engine.ok()) << engine.error();
    for (int round = 0; round < 2; ++round) {
        GenerationRequest r;
        r.prompt = prompt;
        r.max_tokens = 8;
        r.ignore_eos = true;
        r.n = 2;
        auto h = (*engine)->submit(r);
        ASSERT_TRUE(h.ok()) << h.error();
        int finished = 0;
        while (!(*h)->finished()) {
            auto e = (*h)->next(std::chrono::seconds(60));
            ASSERT_TRUE(e.has_value()) << "no event for 60 s";
            if (e->finish == FinishReason::None) continue;
            ++finished;
            if (e->finish == FinishReason::Error) {
                EXPECT_NE(e->error.find("logits"), std::string::npos) << e->error;
            }
        }
        EXPECT_EQ(finished, 2);
    }
}

// The engine serving a model whose file is cut to half: the next request
// reads lost pages (zeros, core/sigbus_guard.h) and ends with an error that
// says so; later submits are refused; the engine reports itself unhealthy.
TEST(MappedFileTest, ModelTruncatedWhileServingFailsRequestsNotTheProcess) {
    const char* model_path = std::getenv("TESSERA_MODEL");
    if (!model_path) GTEST_SKIP() << "TESSERA_MODEL not set";
    TempFile f("tessera-cut.gguf");
    fs::copy_file(model_path, f.path(), fs::copy_options::overwrite_existing);
    auto model = Model::load(f.path());
    ASSERT_TRUE(model.ok()) << model.error();
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
    auto engine = Engine::start(**model, *tokenizer, EngineOptions{.threads = 2});
    ASSERT_TRUE(engine.ok()) << engine.error();
    GenerationRequest r;
    r.prompt = tokenizer->encode("The capital of France is", {.add_special = true});
    r.max_tokens = 4;
    r.ignore_eos = true;
    auto run = [&](FinishReason want) {
        auto h = (*engine)->submit(r);
        ASSERT_TRUE(h.ok()) << h.error();
        std::optional<StreamEvent> e;
        do {
            e = (*h)->next(std::chrono::seconds(60));
            ASSERT_TRUE(e.has_value()) << "no event for 60 s";
        } while (e->finish == FinishReason::None);
        EXPECT_EQ(e->finish, want) << e->error;
        if (want == FinishReason::Error) {
            EXPECT_NE(e->error.find("changed on disk"), std::string::npos) << e->error;
        }
    };
    run(FinishReason::Length);
    EXPECT_FALSE((*engine)->model_damaged());
    EXPECT_TRUE((*engine)->healthy());

    ASSERT_EQ(truncate(f.path().c_str(), static_cast<off_t>(fs::file_size(f.path()) / 2)), 0);
    EXPECT_FALSE((*engine)->healthy()) << "the file is shorter than its mapping";
    run(FinishReason::Error);
    EXPECT_TRUE((*model)->gguf().mapping()->damaged()) << "the forward pass read no lost page?";
    EXPECT_TRUE((*engine)->model_damaged());
    auto refused = (*engine)->submit(r);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("changed on disk"), std::string::npos) << refused.error();
    EXPECT_EQ(refused.status().kind(), ErrorKind::Unavailable);  // a 503, not "queue full"
}

}  // namespace
}  // namespace tessera
