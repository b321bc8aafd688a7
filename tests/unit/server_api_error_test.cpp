// The one table from error kind to HTTP reply, and the per-request limits the
// engine and the server share: every kind maps to the status a client (and
// the OpenAI SDK's retry logic) expects, and an engine Status keeps its
// message on the way out.
#include <gtest/gtest.h>

#include "engine/request.h"
#include "server/api_error.h"

namespace tessera {
namespace {

TEST(ApiErrorTable, EachKindHasItsHttpStatus) {
    struct Case {
        ErrorKind kind;
        int status;
        std::string type;
    };
    const Case cases[] = {
        {ErrorKind::InvalidArgument, 400, "invalid_request_error"},
        {ErrorKind::LimitExceeded, 400, "invalid_request_error"},
        {ErrorKind::NotFound, 404, "invalid_request_error"},
        {ErrorKind::Overloaded, 429, "rate_limit_error"},  // the SDKs retry 429 with backoff
        {ErrorKind::Unavailable, 503, "server_error"},
        {ErrorKind::Internal, 500, "server_error"},
    };
    for (const Case& c : cases) {
        const ApiError e = api_error(Status::error(c.kind, "why"));
        EXPECT_EQ(e.http_status, c.status) << static_cast<int>(c.kind);
        EXPECT_EQ(e.type, c.type) << static_cast<int>(c.kind);
        EXPECT_EQ(e.message, "why");
    }
}

TEST(ApiErrorTable, BuildersGoThroughTheTable) {
    EXPECT_EQ(bad_request("n", "x").http_status, reply_for_kind(ErrorKind::InvalidArgument).http_status);
    EXPECT_EQ(bad_request("n", "x").param, "n");
    EXPECT_EQ(unavailable("x").http_status, 503);
    EXPECT_EQ(internal_error("x").http_status, 500);
    const ApiError nf = model_not_found("m");
    EXPECT_EQ(nf.http_status, 404);
    EXPECT_EQ(nf.code, "model_not_found");  // an explicit code beats the kind's default
    EXPECT_EQ(not_found("x").code, "not_found");
}

TEST(StatusKind, DefaultsAndOkKindIsNeverOk) {
    EXPECT_EQ(Status().kind(), ErrorKind::Ok);
    EXPECT_EQ(Status::error("bad input").kind(), ErrorKind::InvalidArgument);
    const Status odd = Status::error(ErrorKind::Ok, "an error built with kind Ok");
    EXPECT_FALSE(odd.ok());
    EXPECT_EQ(odd.kind(), ErrorKind::Internal);
    Expected<int> e{Status::error(ErrorKind::Overloaded, "full")};
    EXPECT_EQ(e.status().kind(), ErrorKind::Overloaded);
}

TEST(RequestLimits, CheckNamesTheFirstCapExceeded) {
    const RequestLimits limits;
    GenerationRequest r;
    EXPECT_TRUE(limits.check(r).ok());
    r.n = limits.max_n;
    EXPECT_TRUE(limits.check(r).ok());
    r.n = limits.max_n + 1;
    EXPECT_EQ(limits.check(r).kind(), ErrorKind::LimitExceeded);
    EXPECT_NE(limits.check(r).message().find("n must be"), std::string::npos);
    r.n = 1;
    r.top_logprobs = limits.max_top_logprobs + 1;
    EXPECT_NE(limits.check(r).message().find("top_logprobs"), std::string::npos);
    r.top_logprobs = -1;
    r.stop.assign(limits.max_stop + 1, "x");
    EXPECT_NE(limits.check(r).message().find("stop strings"), std::string::npos);
    r.stop = {std::string(limits.max_stop_bytes + 1, 'x')};
    EXPECT_NE(limits.check(r).message().find("bytes"), std::string::npos);
    r.stop.clear();
    r.sampling.logit_bias.assign(limits.max_logit_bias + 1, {0, 1.0f});
    EXPECT_NE(limits.check(r).message().find("logit_bias"), std::string::npos);
}

}  // namespace
}  // namespace tessera
