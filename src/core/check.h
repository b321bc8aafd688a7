// Invariant checks for bugs inside the engine (not for bad input, which gets a
// Status). A failed check prints file:line and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TS_CHECK(cond)                                                              \
    do {                                                                            \
        if (!(cond)) {                                                              \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                           \
        }                                                                           \
    } while (0)

#define TS_CHECK_MSG(cond, msg)                                                     \
    do {                                                                            \
        if (!(cond)) {                                                              \
            std::fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, \
                         #cond, msg);                                               \
            std::abort();                                                           \
        }                                                                           \
    } while (0)
