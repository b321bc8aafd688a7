// Cross-origin access for browser clients (--cors-origin): preflight answers
// and the Access-Control-* fields on every reply to an allowed origin.
#pragma once

#include <string>
#include <vector>

#include "server/http_message.h"

namespace tessera {

class CorsPolicy {
public:
    CorsPolicy() = default;  // no origin allowed: no CORS fields at all
    explicit CorsPolicy(std::vector<std::string> origins) : origins_(std::move(origins)) {}

    bool enabled() const { return !origins_.empty(); }
    // True for a browser's preflight (OPTIONS with an Origin) this policy answers.
    bool is_preflight(const HttpRequest& head) const;
    HttpReply preflight(const HttpRequest& head) const;
    // Adds Access-Control-Allow-Origin (and Vary) when the request's origin is allowed.
    void decorate(const HttpRequest& request, HttpReply& reply) const;

private:
    bool allows(const std::string& origin) const;

    std::vector<std::string> origins_;  // exact origins, or "*" for any
};

}  // namespace tessera
