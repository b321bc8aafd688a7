// Builders for the OpenAI error shapes used across the server.
#include "server/api_error.h"

#include <utility>

namespace tessera {

Json ApiError::to_json() const {
    Json e = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
    if (!param.empty()) e["param"] = param;
    if (!code.empty()) e["code"] = code;
    return Json{{"error", std::move(e)}};
}

ErrorKindReply reply_for_kind(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::InvalidArgument: return {400, "invalid_request_error", ""};
        case ErrorKind::NotFound: return {404, "invalid_request_error", "not_found"};
        case ErrorKind::LimitExceeded: return {400, "invalid_request_error", "limit_exceeded"};
        case ErrorKind::Overloaded: return {429, "rate_limit_error", "rate_limit_exceeded"};
        case ErrorKind::Unavailable: return {503, "server_error", "unavailable"};
        case ErrorKind::Ok:  // not an error: a caller bug, answered as one
        case ErrorKind::Internal: break;
    }
    return {500, "server_error", ""};
}

ApiError api_error(ErrorKind kind, std::string message, std::string param, std::string code) {
    const ErrorKindReply r = reply_for_kind(kind);
    return ApiError{r.http_status, std::move(message), r.type, std::move(param), code.empty() ? r.code : code};
}

ApiError api_error(const Status& status) { return api_error(status.kind(), status.message()); }

ApiError bad_request(std::string param, std::string message, std::string code) {
    return api_error(ErrorKind::InvalidArgument, std::move(message), std::move(param), std::move(code));
}

ApiError not_found(std::string message) { return api_error(ErrorKind::NotFound, std::move(message)); }

ApiError model_not_found(const std::string& model) {
    return api_error(ErrorKind::NotFound, "The model '" + model + "' does not exist", "model", "model_not_found");
}

ApiError unauthorized() {
    return ApiError{401, "Invalid or missing API key. Send it as 'Authorization: Bearer <key>'.",
                    "invalid_request_error", "", "invalid_api_key"};
}

ApiError headers_too_large(std::string message) {
    return ApiError{431, std::move(message), "invalid_request_error", "", "headers_too_large"};
}

ApiError unavailable(std::string message) { return api_error(ErrorKind::Unavailable, std::move(message)); }

ApiError internal_error(std::string message) { return api_error(ErrorKind::Internal, std::move(message)); }

ApiError error_for_status(int http_status, const std::string& method, const std::string& path) {
    switch (http_status) {
        case 404: return not_found("Unknown route: " + method + " " + path);
        case 405: return ApiError{405, "Method " + method + " is not allowed on " + path, "invalid_request_error", "",
                                  "method_not_allowed"};
        case 413: return ApiError{413, "Request body is too large", "invalid_request_error", "", "payload_too_large"};
        case 415:
            return ApiError{415, "Compressed request bodies are not accepted (send Content-Encoding: identity)",
                            "invalid_request_error", "", "unsupported_media_type"};
        case 401: return unauthorized();
        default: break;
    }
    if (http_status >= 500) return internal_error("Internal server error");
    return ApiError{http_status, "Malformed HTTP request", "invalid_request_error", "", ""};
}

HttpReply json_reply(int status, const Json& body) {
    HttpReply r;
    r.status = status;
    r.body = dump_json(body);
    return r;
}

HttpReply error_reply(const ApiError& error) { return json_reply(error.http_status, error.to_json()); }

}  // namespace tessera
