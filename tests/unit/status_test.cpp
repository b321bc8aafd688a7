// Status / Expected semantics that the rest of the code relies on.
#include "core/status.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

Expected<int> half(int x) {
    if (x % 2 != 0) return Status::error("odd");
    return x / 2;
}

Status chain(int x) {
    TS_RETURN_IF_ERROR(half(x).status());
    return Status();
}

TEST(Status, ValueAndError) {
    auto ok = half(4);
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, 2);
    auto bad = half(3);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), "odd");
}

TEST(Status, Propagates) {
    EXPECT_TRUE(chain(2).ok());
    EXPECT_EQ(chain(1).message(), "odd");
}

TEST(Status, ExpectedFromOkStatusIsAnError) {
    Expected<int> e{Status()};
    EXPECT_FALSE(e.ok());
}

}  // namespace
}  // namespace tessera
