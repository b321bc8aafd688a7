// Caps that keep a hostile or buggy template from using unbounded time,
// memory or stack. A render that hits one fails with an error value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {

struct TemplateLimits {
    int max_recursion_depth = 64;          // nested macro calls
    int max_nesting = 128;                 // syntactic nesting when parsing
    int64_t max_loop_iterations = 100000;  // all loop iterations of one render together
    size_t max_output_bytes = 4u << 20;    // rendered text, and any one string or list built
    int64_t max_steps = 5000000;           // evaluated expressions and statements
};

}  // namespace tessera
