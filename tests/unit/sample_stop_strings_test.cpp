// StopStringMatcher on streamed chunks: stops straddling chunks, overlapping
// prefixes, several stops at once, false starts, UTF-8, flush at the end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sample/stop_strings.h"

namespace tessera {
namespace {

struct Streamed {
    std::vector<std::string> emits;
    std::string text;  // everything emitted, plus flush() when no stop matched
    bool stopped = false;
};

Streamed stream(std::vector<std::string> stops, const std::vector<std::string>& chunks) {
    StopStringMatcher m(std::move(stops));
    Streamed out;
    for (const auto& chunk : chunks) {
        auto r = m.push(chunk);
        out.emits.push_back(r.emit);
        out.text += r.emit;
        out.stopped = r.stopped;
        if (r.stopped) return out;
    }
    out.text += m.flush();
    return out;
}

TEST(SampleStopStrings, NoStopsPassesEverythingThrough) {
    auto s = stream({}, {"hello", " world"});
    EXPECT_EQ(s.emits, (std::vector<std::string>{"hello", " world"}));
    EXPECT_FALSE(s.stopped);
}

TEST(SampleStopStrings, StopInsideOneChunk) {
    auto s = stream({"STOP"}, {"hello STOP world"});
    EXPECT_TRUE(s.stopped);
    EXPECT_EQ(s.text, "hello ");
}

TEST(SampleStopStrings, StopStraddlingChunksIsNeverEmitted) {
    auto s = stream({"STOP"}, {"hel", "lo ST", "O", "P and more"});
    EXPECT_TRUE(s.stopped);
    EXPECT_EQ(s.emits, (std::vector<std::string>{"hel", "lo ", "", ""}));
    EXPECT_EQ(s.text, "hello ");
}

TEST(SampleStopStrings, FalseStartIsReleased) {
    auto s = stream({"STOP"}, {"ST", "AR", "T"});
    EXPECT_FALSE(s.stopped);
    EXPECT_EQ(s.emits, (std::vector<std::string>{"", "STAR", "T"}));
}

TEST(SampleStopStrings, OverlappingPrefixes) {
    // "ab" + "ab": no match; the tail "ab" may still start "abc", the head is safe.
    auto s = stream({"abc"}, {"ab", "ab", "c"});
    EXPECT_EQ(s.emits, (std::vector<std::string>{"", "ab", ""}));
    EXPECT_TRUE(s.stopped);
    // Self-overlapping stop: "aaa" holds "aa", then "aab" completes the stop.
    auto t = stream({"aab"}, {"a", "a", "a", "b"});
    EXPECT_EQ(t.emits, (std::vector<std::string>{"", "", "a", ""}));
    EXPECT_TRUE(t.stopped);
}

TEST(SampleStopStrings, EarliestOfSeveralStopsWins) {
    auto s = stream({"world", "lo w"}, {"hello world"});
    EXPECT_EQ(s.text, "hel");
    // Hold-back is the longest tail over all stops: "xy" could start "xyz",
    // then "q" completes the other stop "yq" that begins inside the held text.
    auto t = stream({"xyz", "yq"}, {"axy", "q"});
    EXPECT_EQ(t.emits, (std::vector<std::string>{"a", "x"}));
    EXPECT_TRUE(t.stopped);
}

TEST(SampleStopStrings, Utf8StopSplitAcrossChunks) {
    // "é" is C3 A9; the chunk boundary falls inside it.
    auto s = stream({"\xC3\xA9"}, {"caf\xC3", "\xA9 au lait"});
    EXPECT_EQ(s.emits, (std::vector<std::string>{"caf", ""}));
    EXPECT_TRUE(s.stopped);
    // "ï" (C3 AF) shares the lead byte: held back, then released whole.
    auto t = stream({"\xC3\xA9"}, {"na\xC3", "\xAFve"});
    EXPECT_EQ(t.emits, (std::vector<std::string>{"na", "\xC3\xAFve"}));
    EXPECT_FALSE(t.stopped);
}

TEST(SampleStopStrings, FlushReturnsHeldText) {
    StopStringMatcher m({"END"});
    EXPECT_EQ(m.push("the EN").emit, "the ");
    EXPECT_EQ(m.flush(), "EN");
    EXPECT_EQ(m.flush(), "");
}

TEST(SampleStopStrings, AfterStopNothingMoreIsEmitted) {
    StopStringMatcher m({"\n\n", "\n"});
    auto r = m.push("line one\n\nline two");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.emit, "line one");
    EXPECT_TRUE(m.stopped());
    auto again = m.push("more");
    EXPECT_TRUE(again.stopped);
    EXPECT_EQ(again.emit, "");
}

TEST(SampleStopStrings, EmptyStopStringsAreIgnored) {
    auto s = stream({"", "zz"}, {"abc"});
    EXPECT_FALSE(s.stopped);
    EXPECT_EQ(s.text, "abc");
}

}  // namespace
}  // namespace tessera
