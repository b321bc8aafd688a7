// JSON Schema's integer bounds as a grammar: the decimal spellings (no
// leading zeros; "-0" where 0 and negatives are in range) of exactly the integers in
// [lo, hi], either end open. Built digit by digit, so the expression stays a few hundred bytes
// even for 19-digit bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera {

// A GBNF expression (alternatives over literals and digit classes) for the
// integers in [lo, hi]; lo <= hi when both are given.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace tessera
