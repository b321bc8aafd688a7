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

ApiError bad_request(std::string param, std::string message, std::string code) {
    return ApiError{400, std::move(message), "invalid_request_error", std::move(param), std::move(code)};
}

ApiError not_found(std::string message) {
    return ApiError{404, std::move(message), "invalid_request_error", "", "not_found"};
}

ApiError model_not_found(const std::string& model) {
    return ApiError{404, "The model '" + model + "' does not exist", "invalid_request_error", "model",
                    "model_not_found"};
}

ApiError unauthorized() {
    return ApiError{401, "Invalid or missing API key. Send it as 'Authorization: Bearer <key>'.",
                    "invalid_request_error", "", "invalid_api_key"};
}

ApiError headers_too_large(std::string message) {
    return ApiError{431, std::move(message), "invalid_request_error", "", "headers_too_large"};
}

ApiError overloaded(std::string message) {
    return ApiError{429, std::move(message), "rate_limit_error", "", "rate_limit_exceeded"};
}

ApiError unavailable(std::string message) {
    return ApiError{503, std::move(message), "server_error", "", "unavailable"};
}

ApiError internal_error(std::string message) {
    return ApiError{500, std::move(message), "server_error", "", ""};
}

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
