// Text forms of template values (see value_format.h). Recursion here is
// bounded because every container's depth is capped at kMaxValueDepth.
#include "template/value_format.h"

#include <algorithm>
#include <cmath>

#include "template/text_util.h"

namespace tessera::jinja {
namespace {

std::string container_repr(const Value& v) {
    std::string out;
    if (v.is_list()) {
        out = v.is_tuple() ? "(" : "[";
        const ValueList& items = v.as_list();
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += ", ";
            out += to_repr(items[i]);
        }
        if (v.is_tuple() && items.size() == 1) out += ",";
        return out + (v.is_tuple() ? ")" : "]");
    }
    const Dict& d = v.kind() == ValueKind::Namespace ? v.as_namespace().attrs : v.as_dict();
    out = "{";
    for (size_t i = 0; i < d.items.size(); ++i) {
        if (i) out += ", ";
        out += to_repr(d.items[i].first) + ": " + to_repr(d.items[i].second);
    }
    out += "}";
    return v.kind() == ValueKind::Namespace ? "<Namespace " + out + ">" : out;
}

std::string scalar_str(const Value& v) {
    switch (v.kind()) {
        case ValueKind::None: return "None";
        case ValueKind::Bool: return v.as_bool() ? "True" : "False";
        case ValueKind::Int: return std::to_string(v.as_int());
        case ValueKind::Float: return format_float(v.as_double());
        case ValueKind::Callable: return "<function>";
        default: return "";
    }
}

Expected<std::string> json_key(const Value& k) {
    if (k.is_string()) return k.as_string();
    if (k.kind() == ValueKind::Bool) return std::string(k.as_bool() ? "true" : "false");
    if (k.is_none()) return std::string("null");
    if (k.is_number()) return scalar_str(k);
    return Status::error(std::string("keys must be str, int, float, bool or None, not ") + k.type_name());
}

class JsonWriter {
public:
    explicit JsonWriter(const JsonStyle& style) : style_(style) {}
    Status write(const Value& v, int level);
    std::string out;

private:
    void newline(int level) {
        if (!style_.indent) return;
        out += '\n';
        out.append(static_cast<size_t>(std::max(0, *style_.indent) * level), ' ');
    }
    Status write_list(const ValueList& items, int level);
    Status write_dict(const Dict& d, int level);
    const JsonStyle& style_;
};

Status JsonWriter::write(const Value& v, int level) {
    switch (v.kind()) {
        case ValueKind::None: out += "null"; return ok_status();
        case ValueKind::Bool: out += v.as_bool() ? "true" : "false"; return ok_status();
        case ValueKind::Int: out += std::to_string(v.as_int()); return ok_status();
        case ValueKind::Float: {
            const double d = v.as_double();
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : format_float(d);
            return ok_status();
        }
        case ValueKind::String: out += json_quote(v.as_string()); return ok_status();
        case ValueKind::List: return write_list(v.as_list(), level);
        case ValueKind::Dict: return write_dict(v.as_dict(), level);
        default:
            return Status::error(std::string("Object of type ") + v.type_name() + " is not JSON serializable");
    }
}

Status JsonWriter::write_list(const ValueList& items, int level) {
    if (items.empty()) {
        out += "[]";
        return ok_status();
    }
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += style_.item_separator;
        newline(level + 1);
        TS_RETURN_IF_ERROR(write(items[i], level + 1));
    }
    newline(level);
    out += ']';
    return ok_status();
}

Status JsonWriter::write_dict(const Dict& d, int level) {
    if (d.items.empty()) {
        out += "{}";
        return ok_status();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [k, v] : d.items) {
        auto key = json_key(k);
        if (!key) return key.status();
        entries.emplace_back(std::move(*key), &v);
    }
    if (style_.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += style_.item_separator;
        newline(level + 1);
        out += json_quote(entries[i].first) + style_.key_separator;
        TS_RETURN_IF_ERROR(write(*entries[i].second, level + 1));
    }
    newline(level);
    out += '}';
    return ok_status();
}

Expected<Value> from_json_at(const nlohmann::ordered_json& j, uint32_t depth) {
    if (depth > kMaxValueDepth) return Status::error("JSON nested deeper than " + std::to_string(kMaxValueDepth));
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return Value::none();
        case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            const uint64_t u = j.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return Value::number(static_cast<double>(u));
            return Value::integer(static_cast<int64_t>(u));
        }
        case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            ValueList items;
            for (const auto& item : j) {
                auto v = from_json_at(item, depth + 1);
                if (!v) return v;
                items.push_back(std::move(*v));
            }
            return Value::list(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            Dict d;
            for (auto it = j.begin(); it != j.end(); ++it) {
                auto v = from_json_at(it.value(), depth + 1);
                if (!v) return v;
                d.items.emplace_back(Value::string(it.key()), std::move(*v));
            }
            return Value::dict(std::move(d));
        }
        default: return Status::error("unsupported JSON value (binary or discarded)");
    }
}

}  // namespace

std::string to_str(const Value& v) {
    switch (v.kind()) {
        case ValueKind::Undefined: return "";
        case ValueKind::String: return v.as_string();
        case ValueKind::List:
        case ValueKind::Dict:
        case ValueKind::Namespace: return container_repr(v);
        default: return scalar_str(v);
    }
}

std::string to_repr(const Value& v) {
    if (v.is_string()) return py_repr_string(v.as_string());
    if (v.is_undefined()) return "Undefined";
    return to_str(v);
}

JsonStyle default_json_style(std::optional<int> indent) {
    JsonStyle style;
    style.indent = indent;
    style.item_separator = indent ? "," : ", ";
    return style;
}

Expected<std::string> to_json(const Value& v, const JsonStyle& style) {
    JsonWriter writer(style);
    TS_RETURN_IF_ERROR(writer.write(v, 0));
    return std::move(writer.out);
}

Expected<Value> from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

}  // namespace tessera::jinja
