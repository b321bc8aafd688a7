// Exception-free JSON helpers for request bodies and responses.
#include "server/json_util.h"

namespace tessera {

std::string dump_json(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool json_nesting_exceeds(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // skip the escaped character
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return true;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return false;
}

}  // namespace tessera
