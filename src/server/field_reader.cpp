// Field-level validation shared by every JSON endpoint.
#include "server/field_reader.h"

#include <cmath>
#include <limits>

#include "core/check.h"

namespace tessera {
namespace {

std::string range_text(double lo, double hi) {
    auto fmt = [](double v) {
        Json j = v;
        if (v == std::floor(v) && std::fabs(v) < 1e15) j = static_cast<int64_t>(v);
        return j.dump();
    };
    return "[" + fmt(lo) + ", " + fmt(hi) + "]";
}

}  // namespace

std::optional<ApiError> parse_json_object(std::string_view body, int max_depth, Json& out) {
    if (json_nesting_exceeds(body, max_depth)) {
        return bad_request("", "JSON body nests deeper than " + std::to_string(max_depth) + " levels");
    }
    std::optional<Json> parsed = parse_json(body);
    if (!parsed) return bad_request("", "Request body is not valid JSON");
    out = std::move(*parsed);
    if (!out.is_object()) return bad_request("", "Request body must be a JSON object");
    return std::nullopt;
}

std::optional<int64_t> json_to_int(const Json& v, int64_t lo, int64_t hi) {
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        const auto i = static_cast<int64_t>(u);
        return i >= lo && i <= hi ? std::optional<int64_t>(i) : std::nullopt;
    }
    if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        return i >= lo && i <= hi ? std::optional<int64_t>(i) : std::nullopt;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
            return std::nullopt;
        }
        return static_cast<int64_t>(d);
    }
    return std::nullopt;
}

const Json* FieldReader::find(const char* key) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
}

void FieldReader::fail(ApiError error) {
    if (!error_) error_ = std::move(error);
}

bool FieldReader::number(const char* key, double lo, double hi, float& out) {
    if (error_) return false;
    const Json* v = find(key);
    if (!v) return true;
    if (!v->is_number()) {
        fail(bad_request(key, std::string("'") + key + "' must be a number"));
        return false;
    }
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
        fail(bad_request(key, std::string("'") + key + "' must be in " + range_text(lo, hi)));
        return false;
    }
    out = static_cast<float>(d);
    return true;
}

bool FieldReader::integer(const char* key, int64_t lo, int64_t hi, int64_t& out) {
    if (error_) return false;
    const Json* v = find(key);
    if (!v) return true;
    if (!v->is_number()) {
        fail(bad_request(key, std::string("'") + key + "' must be an integer"));
        return false;
    }
    auto i = json_to_int(*v, lo, hi);
    if (!i) {
        fail(bad_request(key, std::string("'") + key + "' must be an integer in " +
                                  range_text(static_cast<double>(lo), static_cast<double>(hi))));
        return false;
    }
    out = *i;
    return true;
}

bool FieldReader::integer(const char* key, int64_t lo, int64_t hi, int32_t& out) {
    TS_CHECK(lo >= std::numeric_limits<int32_t>::min() && hi <= std::numeric_limits<int32_t>::max());
    int64_t wide = out;
    if (!integer(key, lo, hi, wide)) return false;
    out = static_cast<int32_t>(wide);
    return true;
}

bool FieldReader::boolean(const char* key, bool& out) {
    if (error_) return false;
    const Json* v = find(key);
    if (!v) return true;
    if (!v->is_boolean()) {
        fail(bad_request(key, std::string("'") + key + "' must be a boolean"));
        return false;
    }
    out = v->get<bool>();
    return true;
}

bool FieldReader::string(const char* key, std::string& out) {
    if (error_) return false;
    const Json* v = find(key);
    if (!v) return true;
    if (!v->is_string()) {
        fail(bad_request(key, std::string("'") + key + "' must be a string"));
        return false;
    }
    out = v->get<std::string>();
    return true;
}

}  // namespace tessera
