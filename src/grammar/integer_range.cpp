// Integer ranges as GBNF (see integer_range.h). Magnitudes are handled as
// digit strings: a range of equal-length numbers splits at the first digit
// where its ends differ (the classic range-to-regex construction).
#include "grammar/integer_range.h"

#include <string_view>
#include <vector>

#include "core/check.h"

namespace tessera {
namespace {

std::string digit_class(char from, char to) {
    if (from == to) return std::string("\"") + from + "\"";
    if (from == '0' && to == '9') return "[0-9]";
    return std::string("[") + from + "-" + to + "]";
}

std::string any_digits(size_t n) {
    if (n == 0) return "";
    return n == 1 ? "[0-9]" : "[0-9]{" + std::to_string(n) + "}";
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (const auto& p : parts) {
        if (p.empty()) continue;
        out += (out.empty() ? "" : sep) + p;
    }
    return out;
}

// The digit strings of length x.size() from x to y (x <= y, same length).
std::string same_length(std::string_view x, std::string_view y) {
    TS_CHECK(x.size() == y.size() && !x.empty());
    if (x == y) return "\"" + std::string(x) + "\"";
    if (x[0] == y[0]) return join({"\"" + std::string(1, x[0]) + "\"", "(" + same_length(x.substr(1), y.substr(1)) + ")"}, " ");
    const size_t rest = x.size() - 1;
    const std::string_view xr = x.substr(1), yr = y.substr(1);
    const bool x_low = xr.find_first_not_of('0') == std::string_view::npos;  // x0 000..
    const bool y_high = yr.find_first_not_of('9') == std::string_view::npos;  // y0 999..
    std::vector<std::string> alts;
    // First digit x0 (unless its whole block is covered below), middle digits free, last y0.
    const char lo_free = x_low ? x[0] : static_cast<char>(x[0] + 1);
    const char hi_free = y_high ? y[0] : static_cast<char>(y[0] - 1);
    if (!x_low) alts.push_back(join({"\"" + std::string(1, x[0]) + "\"", "(" + same_length(xr, std::string(rest, '9')) + ")"}, " "));
    if (lo_free <= hi_free) alts.push_back(join({digit_class(lo_free, hi_free), any_digits(rest)}, " "));
    if (!y_high) alts.push_back(join({"\"" + std::string(1, y[0]) + "\"", "(" + same_length(std::string(rest, '0'), yr) + ")"}, " "));
    return join(alts, " | ");
}

// Magnitudes from a to b (b absent: no upper end), as canonical decimals.
std::string magnitudes(uint64_t a, std::optional<uint64_t> b) {
    const std::string as = std::to_string(a);
    std::vector<std::string> alts;
    if (!b) {
        // Every length from a's: up to a's length's largest, then any longer number.
        alts.push_back(magnitudes(a, std::stoull(std::string(as.size(), '9'))));
        alts.push_back("[1-9] [0-9]{" + std::to_string(as.size()) + ",}");
        return "((" + join(alts, ") | (") + "))";
    }
    const std::string bs = std::to_string(*b);
    for (size_t len = as.size(); len <= bs.size(); ++len) {
        const std::string lo = len == as.size() ? as : (len == 1 ? "0" : "1" + std::string(len - 1, '0'));
        const std::string hi = len == bs.size() ? bs : std::string(len, '9');
        alts.push_back(same_length(lo, hi));
    }
    return "((" + join(alts, ") | (") + "))";
}

uint64_t magnitude(int64_t v) { return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
    TS_CHECK(!lo || !hi || *lo <= *hi);
    std::vector<std::string> alts;
    if (!lo || *lo < 0) {  // negatives: "-" and a magnitude from max(1, -hi) to -lo
        const uint64_t smallest = hi && *hi < 0 ? magnitude(*hi) : 1;
        std::optional<uint64_t> largest;
        if (lo) largest = magnitude(*lo);
        alts.push_back("\"-\" " + magnitudes(smallest, largest));
    }
    // "-0" is 0 to JSON: allowed where negatives are (as json-integer and
    // llguidance do), not in a range from 0 up.
    if ((!lo || *lo < 0) && (!hi || *hi >= 0)) alts.push_back("\"-0\"");
    if (!hi || *hi >= 0) {
        const uint64_t smallest = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
        std::optional<uint64_t> largest;
        if (hi) largest = static_cast<uint64_t>(*hi);
        alts.push_back(magnitudes(smallest, largest));
    }
    return "(" + join(alts, " | ") + ")";
}

}  // namespace tessera
