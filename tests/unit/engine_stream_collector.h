// Reading a request's whole stream in engine tests: each choice's text,
// final reason and final event (two final events for one choice fail).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "engine/request_handle.h"

namespace tessera::test {

struct Collected {
    std::map<int32_t, std::string> text;
    std::map<int32_t, FinishReason> finish;
    std::map<int32_t, StreamEvent> last;
};

inline Collected collect(RequestHandle& h) {
    Collected c;
    while (!h.finished()) {
        auto e = h.next(std::chrono::seconds(120));
        if (!e) {
            ADD_FAILURE() << "engine produced no event for 120 s";
            break;
        }
        c.text[e->index] += e->text;
        if (e->finish != FinishReason::None) {
            EXPECT_EQ(c.finish.count(e->index), 0u) << "two final events for choice " << e->index;
            c.finish[e->index] = e->finish;
            c.last[e->index] = *e;
        }
    }
    return c;
}

}  // namespace tessera::test
