// Compiling GBNF text in grammar tests, failing the test on an error.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar/gbnf.h"

namespace tessera::test {

inline std::shared_ptr<const Grammar> compile_gbnf(const std::string& text) {
    auto g = parse_gbnf(text);
    EXPECT_TRUE(g.ok()) << g.error();
    if (!g.ok()) return nullptr;
    return std::make_shared<const Grammar>(std::move(*g));
}

}  // namespace tessera::test
