// OpenAI-style API errors: the HTTP status plus the {"error": {message, type,
// param, code}} body every client library knows how to read. Every way a
// request can fail on the server side ends up as one of these.
#pragma once

#include <string>

#include "core/status.h"
#include "server/http_message.h"
#include "server/json_util.h"

namespace tessera {

struct ApiError {
    int http_status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string param;  // the offending request field; empty: none
    std::string code;   // machine-readable code; empty: none

    Json to_json() const;
    std::string body() const { return dump_json(to_json()); }
};

// The one table from error kind to HTTP status, OpenAI error type and default
// code: every builder below and every engine Status goes through it.
struct ErrorKindReply {
    int http_status;
    const char* type;
    const char* code;  // "" : none
};
ErrorKindReply reply_for_kind(ErrorKind kind);

// An error of `kind`; an empty `code` takes the kind's default.
ApiError api_error(ErrorKind kind, std::string message, std::string param = "", std::string code = "");
// A failed Status (e.g. from Engine::submit) as the error a client gets.
ApiError api_error(const Status& status);

ApiError bad_request(std::string param, std::string message, std::string code = "");
ApiError not_found(std::string message);
ApiError model_not_found(const std::string& model);
ApiError unauthorized();
ApiError headers_too_large(std::string message);
ApiError unavailable(std::string message);
ApiError internal_error(std::string message);
// The default error for a bare status code (transport-level failures, 404s).
ApiError error_for_status(int http_status, const std::string& method, const std::string& path);

HttpReply json_reply(int status, const Json& body);
HttpReply error_reply(const ApiError& error);

}  // namespace tessera
