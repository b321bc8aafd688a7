#include "server/cors.h"

#include <algorithm>

namespace tessera {

bool CorsPolicy::allows(const std::string& origin) const {
    if (origin.empty()) return false;
    return std::any_of(origins_.begin(), origins_.end(), [&](const std::string& o) { return o == "*" || o == origin; });
}

bool CorsPolicy::is_preflight(const HttpRequest& head) const {
    return enabled() && head.method == "OPTIONS" && !head.origin.empty();
}

HttpReply CorsPolicy::preflight(const HttpRequest& head) const {
    HttpReply r;
    r.status = allows(head.origin) ? 204 : 403;
    r.content_type = "text/plain";
    if (r.status == 403) return r;  // no Allow-Origin: the browser blocks the real request
    r.headers = {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                 {"Access-Control-Allow-Headers",
                  head.cors_request_headers.empty() ? "Authorization, Content-Type" : head.cors_request_headers},
                 {"Access-Control-Max-Age", "600"}};
    decorate(head, r);
    return r;
}

void CorsPolicy::decorate(const HttpRequest& request, HttpReply& reply) const {
    if (!allows(request.origin)) return;
    const bool any = std::find(origins_.begin(), origins_.end(), "*") != origins_.end();
    reply.headers.emplace_back("Access-Control-Allow-Origin", any ? "*" : request.origin);
    if (!any) reply.headers.emplace_back("Vary", "Origin");
}

}  // namespace tessera
