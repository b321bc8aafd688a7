// JSON Schema -> GBNF: one rule per schema node (named <name>-r<N>), shared
// primitive rules emitted once, $ref targets named before their body is
// compiled so recursion closes. Nesting is bounded by GrammarLimits.
#include "grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "grammar/gbnf.h"
#include "grammar/integer_range.h"
#include "grammar/regex.h"

namespace tessera {
namespace {

using json = nlohmann::ordered_json;  // properties keep their listed order

// Strings escape only what JSON requires (and DEL), as llguidance does: "\/"
// and \u escapes of printable characters are left out, so a model writes
// non-ASCII text as UTF-8 and cannot emit a lone surrogate (\ud800), which
// many decoders reject.
const char* kPrimitives = R"(json-char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u00" ([01] [0-9a-fA-F] | "7" [fF]))
json-string ::= "\"" json-char* "\""
json-integer ::= "-"? ("0" | [1-9] [0-9]*)
json-number ::= json-integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
json-boolean ::= "true" | "false"
json-null ::= "null"
json-value ::= json-object | json-array | json-string | json-number | json-boolean | json-null
json-object ::= "{" ( json-string ":" json-value ( "," json-string ":" json-value )* )? "}"
json-array ::= "[" ( json-value ( "," json-value )* )? "]"
)";

// A GBNF literal matching exactly these bytes.
std::string literal(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7F) {
            static const char* hex = "0123456789ABCDEF";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// The formats a string may declare, as anchored regexes: RFC 3339 date,
// time and date-time (offsets and fractions allowed, ranges of fields but not
// days per month checked), RFC 4122 uuid, and simplified email (dot-atom
// local part, dotted domain) and uri (a scheme, then no spaces, quotes or
// angle brackets).
const char* format_regex(const std::string& format) {
    static const std::map<std::string, const char*> formats{
        {"date", R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$)"},
        {"time", R"(^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
        {"date-time", R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
        {"uuid", R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)"},
        {"email", R"(^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$)"},
        {"uri", R"(^[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^`{|}]+$)"},
    };
    auto it = formats.find(format);
    return it == formats.end() ? nullptr : it->second;
}

const std::set<std::string>& annotations() {
    static const std::set<std::string> a{"title", "description", "default", "examples", "$schema", "$id",
                                         "$comment", "$defs", "definitions", "deprecated", "readOnly", "writeOnly"};
    return a;
}

class SchemaCompiler {
public:
    SchemaCompiler(const json& root, const std::string& name, const GrammarLimits& limits)
        : root_(root), name_(name), limits_(limits) {}

    Expected<std::string> run() {
        std::string top;
        TS_ASSIGN_OR_RETURN(top, node(root_, "#", 0));
        return name_ + " ::= " + top + "\n" + rules_;
    }

private:
    std::string fresh() { return name_ + "-r" + std::to_string(next_++); }
    void emit(const std::string& name, const std::string& body) { rules_ += name + " ::= " + body + "\n"; }

    Status unsupported(const std::string& keyword, const std::string& where) const {
        return Status::error("unsupported JSON Schema keyword '" + keyword + "' at " + where);
    }

    // A GBNF expression (usually a rule name) for the schema at `where`.
    Expected<std::string> node(const json& s, const std::string& where, size_t depth) {
        if (depth > limits_.max_nesting) return Status::error("JSON Schema nested too deeply at " + where);
        if (++n_nodes_ > limits_.max_rules) return Status::error("JSON Schema too large");
        if (s.is_boolean()) {
            if (s.get<bool>()) return std::string("json-value");
            return Status::error("schema 'false' at " + where + " matches nothing");
        }
        if (!s.is_object()) return Status::error("schema at " + where + " is not an object or boolean");
        static const std::set<std::string> known{"type", "properties", "required", "additionalProperties", "items",
                                                 "minItems", "maxItems", "minLength", "maxLength", "enum", "const",
                                                 "anyOf", "oneOf", "allOf", "$ref", "minimum", "maximum",
                                                 "exclusiveMinimum", "exclusiveMaximum", "pattern", "format",
                                                 "prefixItems"};
        for (const auto& [key, value] : s.items()) {
            if (!known.count(key) && !annotations().count(key)) return unsupported(key, where);
        }
        if (s.contains("allOf")) {
            const json* merged = nullptr;
            TS_ASSIGN_OR_RETURN(merged, merge_all_of(s, where, depth));
            return node(*merged, where, depth + 1);
        }
        if (s.contains("$ref")) return ref(s.at("$ref"), where, depth);
        if (s.contains("const")) return literal(s.at("const").dump());
        if (s.contains("enum")) return one_of_values(s.at("enum"), where);
        if (s.contains("anyOf") || s.contains("oneOf")) return alternatives(s, where, depth);
        std::vector<std::string> types;
        if (s.contains("type")) {
            const json& t = s.at("type");
            if (t.is_string()) types.push_back(t.get<std::string>());
            else if (t.is_array()) for (const auto& x : t) types.push_back(x.is_string() ? x.get<std::string>() : "");
            else return Status::error("'type' at " + where + " must be a string or a list");
        } else if (s.contains("properties") || s.contains("additionalProperties")) {
            types.push_back("object");
        } else if (s.contains("items") || s.contains("prefixItems")) {
            types.push_back("array");
        } else if (s.contains("minLength") || s.contains("maxLength") || s.contains("pattern") || s.contains("format")) {
            types.push_back("string");
        } else {
            return std::string("json-value");
        }
        std::string alts;
        for (const auto& t : types) {
            std::string e;
            TS_ASSIGN_OR_RETURN(e, typed(s, t, where, depth));
            alts += (alts.empty() ? "" : " | ") + e;
        }
        const std::string name = fresh();
        emit(name, alts);
        return name;
    }

    Expected<std::string> typed(const json& s, const std::string& type, const std::string& where, size_t depth) {
        if (type != "string") {
            for (const char* k : {"pattern", "format"}) {
                if (s.contains(k)) return Status::error("'" + std::string(k) + "' on a non-string type at " + where);
            }
        }
        if (type == "string") return string_rule(s, where);
        if (type == "integer") return integer_rule(s, where);
        if (type == "number") {
            for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
                if (s.contains(k)) {
                    return Status::error("unsupported JSON Schema keyword '" + std::string(k) + "' on a number at " + where);
                }
            }
            return std::string("json-number");
        }
        if (type == "boolean") return std::string("json-boolean");
        if (type == "null") return std::string("json-null");
        if (type == "array") return array_rule(s, where, depth);
        if (type == "object") return object_rule(s, where, depth);
        return Status::error("unknown type '" + type + "' at " + where);
    }

    Expected<uint32_t> bound(const json& s, const char* key, uint32_t fallback, const std::string& where) const {
        if (!s.contains(key)) return fallback;
        const json& v = s.at(key);
        if (!v.is_number_unsigned() || v.get<uint64_t>() > limits_.max_repetition) {
            return Status::error("'" + std::string(key) + "' at " + where + " must be an integer in [0, " +
                                 std::to_string(limits_.max_repetition) + "]");
        }
        return static_cast<uint32_t>(v.get<uint64_t>());
    }

    static std::string repeat(const std::string& e, uint32_t min, uint32_t max, bool unbounded) {
        if (unbounded) return min == 0 ? e + "*" : (min == 1 ? e + "+" : e + "{" + std::to_string(min) + ",}");
        return e + "{" + std::to_string(min) + "," + std::to_string(max) + "}";
    }

    // One integer bound: minimum / exclusiveMinimum (lower) or maximum /
    // exclusiveMaximum (upper), a fractional bound rounded inwards; the
    // tighter of an inclusive and an exclusive one.
    Expected<std::optional<int64_t>> integer_bound(const json& s, bool lower, const std::string& where) const {
        std::optional<int64_t> out;
        for (const bool exclusive : {false, true}) {
            const char* key = lower ? (exclusive ? "exclusiveMinimum" : "minimum") : (exclusive ? "exclusiveMaximum" : "maximum");
            if (!s.contains(key)) continue;
            const json& v = s.at(key);
            // |bound| < 2^62 keeps the +-1 and the other side's arithmetic exact.
            constexpr double kLimit = 4.6e18;
            if (!v.is_number() || !(std::fabs(v.get<double>()) < kLimit)) {
                return Status::error("'" + std::string(key) + "' at " + where + " must be a number within +-4.6e18");
            }
            const int64_t step = exclusive ? (lower ? 1 : -1) : 0;
            int64_t b = 0;
            if (v.is_number_integer()) {
                b = v.get<int64_t>() + step;
            } else {  // x > d: floor(d) + 1; x >= d: ceil(d); x < d: ceil(d) - 1; x <= d: floor(d)
                const double d = v.get<double>();
                b = static_cast<int64_t>(lower == exclusive ? std::floor(d) : std::ceil(d)) + step;
            }
            if (!out || (lower ? b > *out : b < *out)) out = b;
        }
        return out;
    }

    Expected<std::string> integer_rule(const json& s, const std::string& where) {
        std::optional<int64_t> lo, hi;
        TS_ASSIGN_OR_RETURN(lo, integer_bound(s, true, where));
        TS_ASSIGN_OR_RETURN(hi, integer_bound(s, false, where));
        if (!lo && !hi) return std::string("json-integer");
        if (lo && hi && *lo > *hi) return Status::error("the bounds at " + where + " admit no integer");
        return integer_range_gbnf(lo, hi);
    }

    // A string whose value matches `pattern` (searched, as JSON Schema
    // reads it) or a built-in format's regex, escaped as JSON.
    Expected<std::string> pattern_rule(const json& s, const std::string& where) {
        if (s.contains("minLength") || s.contains("maxLength") || (s.contains("pattern") && s.contains("format"))) {
            return Status::error("'pattern' or 'format' together with 'minLength', 'maxLength' or each other at " +
                                 where + " is not supported");
        }
        const char* key = s.contains("pattern") ? "pattern" : "format";
        if (!s.at(key).is_string()) return Status::error("'" + std::string(key) + "' at " + where + " must be a string");
        std::string pattern = s.at(key).get<std::string>();
        if (s.contains("format")) {
            const char* regex = format_regex(pattern);
            if (regex == nullptr) return Status::error("unsupported JSON Schema format '" + pattern + "' at " + where);
            pattern = regex;
        }
        const std::string name = fresh();
        auto rules = regex_to_gbnf(pattern, name, {.search = true, .json_string = true}, limits_);
        if (!rules.ok()) return Status::error("'" + std::string(key) + "' at " + where + ": " + rules.error());
        rules_ += *rules;
        return "\"\\\"\" " + name + " \"\\\"\"";
    }

    Expected<std::string> string_rule(const json& s, const std::string& where) {
        if (s.contains("pattern") || s.contains("format")) return pattern_rule(s, where);
        uint32_t min = 0, max = 0;
        TS_ASSIGN_OR_RETURN(min, bound(s, "minLength", 0, where));
        TS_ASSIGN_OR_RETURN(max, bound(s, "maxLength", 0, where));
        const bool unbounded = !s.contains("maxLength");
        if (!unbounded && max < min) return Status::error("maxLength below minLength at " + where);
        if (min == 0 && unbounded) return std::string("json-string");
        return "\"\\\"\" " + repeat("json-char", min, max, unbounded) + " \"\\\"\"";
    }

    Expected<std::string> array_rule(const json& s, const std::string& where, size_t depth) {
        if (s.contains("prefixItems") && !(s.at("prefixItems").is_array() && s.at("prefixItems").empty())) {
            return tuple_rule(s, where, depth);
        }
        std::string item = "json-value";
        if (s.contains("items")) TS_ASSIGN_OR_RETURN(item, node(s.at("items"), where + "/items", depth + 1));
        uint32_t min = 0, max = 0;
        TS_ASSIGN_OR_RETURN(min, bound(s, "minItems", 0, where));
        TS_ASSIGN_OR_RETURN(max, bound(s, "maxItems", 0, where));
        const bool unbounded = !s.contains("maxItems");
        if (!unbounded && max < min) return Status::error("maxItems below minItems at " + where);
        if (!unbounded && max == 0) return std::string("\"[]\"");
        const uint32_t more_min = min == 0 ? 0 : min - 1;
        const std::string list = item + " " + repeat("(\",\" " + item + ")", more_min, unbounded ? 0 : max - 1, unbounded);
        return "\"[\" " + (min == 0 ? "(" + list + ")?" : list) + " \"]\"";
    }

    // prefixItems: position i holds prefixItems[i], later positions `items`
    // (any value when absent, none when false); minItems / maxItems count
    // them all, and the array may end after any item once minItems is met.
    Expected<std::string> tuple_rule(const json& s, const std::string& where, size_t depth) {
        const json& prefix = s.at("prefixItems");
        if (!prefix.is_array()) return Status::error("'prefixItems' at " + where + " must be a list");
        uint32_t min = 0, max = 0;
        TS_ASSIGN_OR_RETURN(min, bound(s, "minItems", 0, where));
        TS_ASSIGN_OR_RETURN(max, bound(s, "maxItems", 0, where));
        const bool unbounded = !s.contains("maxItems");
        if (!unbounded && max < min) return Status::error("maxItems below minItems at " + where);
        const bool no_rest = s.contains("items") && s.at("items").is_boolean() && !s.at("items").get<bool>();
        const auto k = static_cast<uint32_t>(prefix.size());
        if (no_rest && min > k) return Status::error("minItems above the " + std::to_string(k) + " prefixItems at " + where);
        std::vector<std::string> items;  // position i's rule, for i < k
        for (uint32_t i = 0; i < k; ++i) {
            std::string e;
            TS_ASSIGN_OR_RETURN(e, node(prefix[i], where + "/prefixItems/" + std::to_string(i), depth + 1));
            items.push_back(e);
        }
        // after[i]: what follows the first i items (each with its comma).
        const uint32_t cap = unbounded ? UINT32_MAX : max;
        std::string after;  // after[k]
        if (!no_rest && cap > k) {
            std::string rest = "json-value";
            if (s.contains("items")) TS_ASSIGN_OR_RETURN(rest, node(s.at("items"), where + "/items", depth + 1));
            const uint32_t lo = min > k ? min - k : 0;
            after = repeat("(\",\" " + rest + ")", lo, unbounded ? 0 : cap - k, unbounded);
        }
        for (uint32_t i = std::min(k, cap); i-- > 1;) {  // after[i] from after[i + 1]
            const std::string more = "\",\" " + items[i] + (after.empty() ? "" : " " + after);
            const std::string name = fresh();
            emit(name, i + 1 > min ? more + " | \"\"" : more);  // the array may end before item i
            after = name;
        }
        if (cap == 0) return std::string("\"[]\"");
        const std::string first = items[0] + (after.empty() ? "" : " " + after);
        return "\"[\" " + (min == 0 ? "(" + first + ")?" : first) + " \"]\"";
    }

    // Properties in order; each optional one may be left out, with commas
    // only between those present: rule after_i[first] covers properties i..n.
    Expected<std::string> object_rule(const json& s, const std::string& where, size_t depth) {
        std::vector<std::pair<std::string, std::string>> props;  // key literal + value, name
        std::set<std::string> required;
        if (s.contains("required")) {
            if (!s.at("required").is_array()) return Status::error("'required' at " + where + " must be a list");
            for (const auto& r : s.at("required")) if (r.is_string()) required.insert(r.get<std::string>());
        }
        std::vector<bool> optional;
        if (s.contains("properties")) {
            if (!s.at("properties").is_object()) return Status::error("'properties' at " + where + " must be an object");
            for (const auto& [key, sub] : s.at("properties").items()) {
                std::string v;
                TS_ASSIGN_OR_RETURN(v, node(sub, where + "/properties/" + key, depth + 1));
                props.emplace_back(literal(json(key).dump()) + " \":\" " + v, key);
                optional.push_back(!required.count(key));
            }
        }
        for (const auto& r : required) {
            bool found = false;
            for (const auto& p : props) found = found || p.second == r;
            if (!found) return Status::error("required property '" + r + "' at " + where + " is not in 'properties'");
        }
        std::string extra;  // one additional key/value pair, or empty when none are allowed
        if (s.contains("additionalProperties") && !(s.at("additionalProperties").is_boolean() &&
                                                    !s.at("additionalProperties").get<bool>())) {
            std::string v;
            TS_ASSIGN_OR_RETURN(v, node(s.at("additionalProperties"), where + "/additionalProperties", depth + 1));
            extra = "json-string \":\" " + v;
        }
        // tail[first]: what may follow the last listed property.
        std::string next_first = extra.empty() ? "\"\"" : "(" + extra + " (\",\" " + extra + ")*)?";
        std::string next_more = extra.empty() ? "\"\"" : "(\",\" " + extra + ")*";
        for (size_t i = props.size(); i-- > 0;) {
            const std::string first = fresh(), more = fresh();
            const std::string& kv = props[i].first;
            emit(first, kv + " " + next_more + (optional[i] ? " | " + next_first : ""));
            emit(more, "\",\" " + kv + " " + next_more + (optional[i] ? " | " + next_more : ""));
            next_first = first;
            next_more = more;
        }
        return "\"{\" " + next_first + " \"}\"";
    }

    Expected<std::string> one_of_values(const json& values, const std::string& where) {
        if (!values.is_array() || values.empty()) return Status::error("'enum' at " + where + " must be a non-empty list");
        std::string alts;
        for (const auto& v : values) alts += (alts.empty() ? "" : " | ") + literal(v.dump());
        const std::string name = fresh();
        emit(name, alts);
        return name;
    }

    Expected<std::string> alternatives(const json& s, const std::string& where, size_t depth) {
        if (s.contains("type") || s.contains("properties") || s.contains("items")) {
            return Status::error("anyOf/oneOf next to other constraints at " + where + " is not supported");
        }
        const char* key = s.contains("anyOf") ? "anyOf" : "oneOf";
        const json& list = s.at(key);
        if (!list.is_array() || list.empty()) return Status::error(std::string("'") + key + "' at " + where + " must be a non-empty list");
        std::string alts;
        for (size_t i = 0; i < list.size(); ++i) {
            std::string e;
            TS_ASSIGN_OR_RETURN(e, node(list[i], where + "/" + key + "/" + std::to_string(i), depth + 1));
            alts += (alts.empty() ? "" : " | ") + e;
        }
        const std::string name = fresh();
        emit(name, alts);
        return name;
    }

    // The schema a $ref names: the root or an entry of $defs / definitions.
    Expected<const json*> resolve(const json& r, const std::string& where) const {
        if (!r.is_string()) return Status::error("'$ref' at " + where + " must be a string");
        const std::string path = r.get<std::string>();
        if (path == "#") return &root_;
        for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
            const std::string p(prefix);
            if (path.rfind(p, 0) != 0) continue;
            const std::string container = p.substr(2, p.size() - 3);
            const std::string name = path.substr(p.size());
            if (root_.contains(container) && root_.at(container).is_object() && root_.at(container).contains(name)) {
                return &root_.at(container).at(name);
            }
        }
        return Status::error("'$ref' at " + where + ": cannot resolve '" + path + "'");
    }

    // allOf merged into one schema where the parts combine keyword by
    // keyword: properties joined (a property in several parts: their allOf),
    // required joined, types intersected, the tighter of two bounds,
    // additionalProperties false if any part says so (applied to the joined
    // properties, not part by part as JSON Schema would); any other keyword
    // must agree between parts, else the schema is refused. A part that is
    // a $ref is merged as its target.
    Expected<const json*> merge_all_of(const json& s, const std::string& where, size_t depth) {
        if (depth > limits_.max_nesting) return Status::error("JSON Schema nested too deeply at " + where);
        const json& parts = s.at("allOf");
        if (!parts.is_array() || parts.empty()) return Status::error("'allOf' at " + where + " must be a non-empty list");
        json merged = s;
        merged.erase("allOf");
        for (size_t i = 0; i < parts.size(); ++i) {
            const std::string at = where + "/allOf/" + std::to_string(i);
            const json* part = &parts[i];
            while (part->is_object() && part->contains("$ref")) {
                if (part->size() != 1) return Status::error("'$ref' next to other keywords at " + at + " in an allOf is not supported");
                TS_ASSIGN_OR_RETURN(part, resolve(part->at("$ref"), at));
                if (++n_nodes_ > limits_.max_rules) return Status::error("JSON Schema too large");
            }
            if (part->is_boolean()) {
                if (part->get<bool>()) continue;
                return Status::error("schema 'false' at " + at + " matches nothing");
            }
            if (!part->is_object()) return Status::error("schema at " + at + " is not an object or boolean");
            if (part->contains("allOf")) TS_ASSIGN_OR_RETURN(part, merge_all_of(*part, at, depth + 1));
            TS_RETURN_IF_ERROR(merge_into(merged, *part, at));
        }
        merged_.push_back(std::move(merged));
        return &merged_.back();
    }

    static Status merge_into(json& a, const json& b, const std::string& where) {
        static const std::set<std::string> lower{"minimum", "exclusiveMinimum", "minLength", "minItems"};
        static const std::set<std::string> upper{"maximum", "exclusiveMaximum", "maxLength", "maxItems"};
        for (const auto& [key, v] : b.items()) {
            if (!a.contains(key) || annotations().count(key)) {
                if (!a.contains(key)) a[key] = v;
                continue;
            }
            json& mine = a[key];
            if (mine == v) continue;
            if (key == "properties" && mine.is_object() && v.is_object()) {
                for (const auto& [name, sub] : v.items()) {
                    mine[name] = mine.contains(name) && mine[name] != sub ? json{{"allOf", {mine[name], sub}}} : sub;
                }
            } else if (key == "required" && mine.is_array() && v.is_array()) {
                for (const auto& r : v) if (std::find(mine.begin(), mine.end(), r) == mine.end()) mine.push_back(r);
            } else if (key == "type") {
                const json ours = mine.is_array() ? mine : json::array({mine});
                const json theirs = v.is_array() ? v : json::array({v});
                const auto has = [](const json& list, const char* t) {
                    return std::find(list.begin(), list.end(), json(t)) != list.end();
                };
                json both = json::array();
                for (const auto& t : ours) {
                    if (std::find(theirs.begin(), theirs.end(), t) != theirs.end()) {
                        both.push_back(t);
                    } else if (t == "number" && has(theirs, "integer")) {
                        both.push_back("integer");  // every integer is a number
                    } else if (t == "integer" && has(theirs, "number")) {
                        both.push_back(t);
                    }
                }
                if (both.empty()) return Status::error("allOf at " + where + ": the parts share no type");
                mine = both.size() == 1 ? both[0] : both;
            } else if ((lower.count(key) || upper.count(key)) && mine.is_number() && v.is_number()) {
                if (lower.count(key) ? v > mine : v < mine) mine = v;
            } else if (key == "additionalProperties" && (v == false || mine == false)) {
                mine = false;
            } else if (key == "additionalProperties" || key == "items") {
                mine = json{{"allOf", {mine, v}}};
            } else {
                return Status::error("allOf at " + where + ": '" + key + "' differs between the parts and cannot be merged");
            }
        }
        return ok_status();
    }

    Expected<std::string> ref(const json& r, const std::string& where, size_t depth) {
        const json* target = nullptr;
        TS_ASSIGN_OR_RETURN(target, resolve(r, where));
        const std::string path = r.get<std::string>();
        auto known = refs_.find(path);
        if (known != refs_.end()) return known->second;
        const std::string name = fresh();  // named first: a recursive reference finds it
        refs_.emplace(path, name);
        std::string body;
        TS_ASSIGN_OR_RETURN(body, node(*target, path, depth + 1));
        emit(name, body);
        return name;
    }

    const json& root_;
    std::string name_;
    GrammarLimits limits_;
    std::string rules_;
    std::map<std::string, std::string> refs_;
    std::deque<json> merged_;  // allOf results: node() keeps references into them
    size_t next_ = 0;
    size_t n_nodes_ = 0;
};

}  // namespace

Expected<std::string> json_schema_rules(std::string_view schema_json, const std::string& name,
                                        const GrammarLimits& limits) {
    if (schema_json.size() > limits.max_source_bytes) {
        return Status::error("JSON Schema too large: over " + std::to_string(limits.max_source_bytes) + " bytes");
    }
    const json schema = json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded()) return Status::error("JSON Schema is not valid JSON");
    return SchemaCompiler(schema, name, limits).run();
}

const char* json_primitives_gbnf() { return kPrimitives; }

Expected<std::string> json_schema_to_gbnf(std::string_view schema_json, const GrammarLimits& limits) {
    std::string rules;
    TS_ASSIGN_OR_RETURN(rules, json_schema_rules(schema_json, "root", limits));
    return rules + kPrimitives;
}

Expected<Grammar> compile_json_schema(std::string_view schema_json, const GrammarLimits& limits) {
    std::string gbnf;
    TS_ASSIGN_OR_RETURN(gbnf, json_schema_to_gbnf(schema_json, limits));
    GrammarLimits generated = limits;
    generated.max_source_bytes = std::max(limits.max_source_bytes, gbnf.size());  // the schema's size was checked
    return parse_gbnf(gbnf, generated);
}

Grammar json_object_grammar() {
    auto g = parse_gbnf(std::string("root ::= json-object\n") + kPrimitives);
    TS_CHECK(g.ok());
    return std::move(*g);
}

}  // namespace tessera
