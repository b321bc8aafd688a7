// Operator semantics (see operators.h). Integer arithmetic is checked for
// overflow (Python ints are unbounded; here overflow is an error) and every
// string or list an operator builds is checked against the size cap.
#include "template/operators.h"

#include <cmath>

#include "template/text_util.h"
#include "template/value_format.h"

namespace tessera::jinja {
namespace {

Status type_error(const std::string& op, const Value& a, const Value& b) {
    return Status::error("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                         b.type_name() + "'");
}

Status too_big(size_t max_bytes) {
    return Status::error("result larger than the output limit of " + std::to_string(max_bytes) + " bytes");
}

Expected<Value> repeat(const Value& seq, int64_t n, size_t max_bytes) {
    if (n < 0) n = 0;
    if (seq.is_string()) {
        const std::string& s = seq.as_string();
        if (!s.empty() && static_cast<uint64_t>(n) > max_bytes / s.size()) return too_big(max_bytes);
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += s;
        return Value::string(std::move(out));
    }
    const ValueList& items = seq.as_list();
    if (!items.empty() && static_cast<uint64_t>(n) > max_bytes / items.size()) return too_big(max_bytes);
    ValueList out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
    return Value::list(std::move(out));
}

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

Expected<Value> int_pow(int64_t base, int64_t exp) {
    int64_t result = 1;
    for (int64_t i = 0; i < exp; ++i) {
        if (__builtin_mul_overflow(result, base, &result)) return Status::error("integer overflow in '**'");
        if (result == 0 || result == 1) break;
    }
    if (result == 1 && base == -1 && exp % 2 == 1) result = -1;
    return Value::integer(result);
}

Expected<Value> int_arith(const std::string& op, int64_t a, int64_t b) {
    int64_t r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(a, b, &r);
    else if (op == "-") overflow = __builtin_sub_overflow(a, b, &r);
    else if (op == "*") overflow = __builtin_mul_overflow(a, b, &r);
    else if (op == "**" && b >= 0) return int_pow(a, b);
    else if (op == "**") return Value::number(std::pow(static_cast<double>(a), static_cast<double>(b)));
    else if (b == 0) return Status::error("integer division or modulo by zero");
    else if (op == "/") return Value::number(static_cast<double>(a) / static_cast<double>(b));
    else if (a == INT64_MIN && b == -1) overflow = true;
    else if (op == "//") r = floor_div(a, b);
    else r = floor_mod(a, b);
    if (overflow) return Status::error("integer overflow in '" + op + "'");
    return Value::integer(r);
}

Expected<Value> float_arith(const std::string& op, double a, double b) {
    if (op == "+") return Value::number(a + b);
    if (op == "-") return Value::number(a - b);
    if (op == "*") return Value::number(a * b);
    if (op == "**") return Value::number(std::pow(a, b));
    if (b == 0.0) return Status::error("float division by zero");
    if (op == "/") return Value::number(a / b);
    if (op == "//") return Value::number(std::floor(a / b));
    double m = std::fmod(a, b);
    if (m != 0.0 && ((m < 0) != (b < 0))) m += b;
    return Value::number(m);
}

// Python's slice.indices(): clamps start/stop for a sequence of length n.
void adjust_slice(int64_t n, int64_t step, std::optional<int64_t>& start, std::optional<int64_t>& stop) {
    auto clamp = [&](std::optional<int64_t>& v, int64_t dflt) {
        if (!v) {
            v = dflt;
            return;
        }
        if (*v < 0) *v += n;
        if (step > 0) *v = std::min(std::max<int64_t>(*v, 0), n);
        else *v = std::min(std::max<int64_t>(*v, -1), n - 1);
    };
    clamp(start, step > 0 ? 0 : n - 1);
    clamp(stop, step > 0 ? n : -1);
}

}  // namespace

Status undefined_error(const Value& v) {
    const std::string hint = v.undefined_hint();
    return Status::error(hint.empty() ? "value is undefined" : hint + " is undefined");
}

Expected<Value> binary_op(const std::string& op, const Value& a, const Value& b, size_t max_bytes) {
    if (op == "~") {
        std::string s = to_str(a);
        s += to_str(b);
        if (s.size() > max_bytes) return too_big(max_bytes);
        return Value::string(std::move(s));
    }
    if (a.is_undefined()) return undefined_error(a);
    if (b.is_undefined()) return undefined_error(b);
    if (a.is_number() && b.is_number()) {
        if (a.kind() == ValueKind::Float || b.kind() == ValueKind::Float) {
            return float_arith(op, a.as_double(), b.as_double());
        }
        return int_arith(op, a.as_int(), b.as_int());
    }
    if (op == "+" && a.kind() == b.kind() && (a.is_string() || a.is_list())) {
        if (a.is_string()) {
            if (a.as_string().size() + b.as_string().size() > max_bytes) return too_big(max_bytes);
            return Value::string(a.as_string() + b.as_string());
        }
        if (a.as_list().size() + b.as_list().size() > max_bytes) return too_big(max_bytes);
        ValueList out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return Value::list(std::move(out));
    }
    if (op == "*" && (a.is_string() || a.is_list()) && b.is_int()) return repeat(a, b.as_int(), max_bytes);
    if (op == "*" && (b.is_string() || b.is_list()) && a.is_int()) return repeat(b, a.as_int(), max_bytes);
    return type_error(op, a, b);
}

static Expected<int> order(const Value& a, const Value& b, const std::string& op) {
    if (a.is_number() && b.is_number()) {
        const double x = a.as_double(), y = b.as_double();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) {
        const int c = a.as_string().compare(b.as_string());
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.is_list() && b.is_list()) {
        const ValueList& x = a.as_list();
        const ValueList& y = b.as_list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (values_equal(x[i], y[i])) continue;
            return order(x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    if (a.is_undefined()) return undefined_error(a);
    if (b.is_undefined()) return undefined_error(b);
    return Status::error("'" + op + "' not supported between instances of '" + a.type_name() + "' and '" +
                         b.type_name() + "'");
}

Expected<bool> compare_op(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return values_equal(a, b);
    if (op == "!=") return !values_equal(a, b);
    if (op == "in" || op == "not in") {
        auto c = contains(b, a);
        if (!c) return c;
        return op == "in" ? *c : !*c;
    }
    auto o = order(a, b, op);
    if (!o) return o.status();
    if (op == "<") return *o < 0;
    if (op == ">") return *o > 0;
    if (op == "<=") return *o <= 0;
    return *o >= 0;
}

Expected<bool> contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case ValueKind::String:
            if (!item.is_string()) {
                return Status::error(std::string("'in <string>' requires string as left operand, not ") +
                                     item.type_name());
            }
            return container.as_string().find(item.as_string()) != std::string::npos;
        case ValueKind::List:
            for (const Value& v : container.as_list()) {
                if (values_equal(v, item)) return true;
            }
            return false;
        case ValueKind::Dict: return container.as_dict().find(item) != nullptr;
        case ValueKind::Namespace: return container.as_namespace().attrs.find(item) != nullptr;
        case ValueKind::Undefined: return false;
        default:
            return Status::error(std::string("argument of type '") + container.type_name() + "' is not iterable");
    }
}

Expected<Value> get_attr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) return undefined_error(obj);
    const Value key = Value::string(name);
    const Value* found = nullptr;
    if (obj.is_dict()) found = obj.as_dict().find(key);
    if (obj.kind() == ValueKind::Namespace) found = obj.as_namespace().attrs.find(key);
    if (found) return *found;
    std::string hint = "'";
    hint.append(obj.type_name()).append(" object' has no attribute '").append(name).append("'");
    return Value::undefined(std::move(hint));
}

Expected<Value> get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) return undefined_error(obj);
    if (obj.is_dict()) {
        if (const Value* v = obj.as_dict().find(key)) return *v;
    } else if ((obj.is_list() || obj.is_string()) && key.is_int()) {
        int64_t i = key.as_int();
        const int64_t n = obj.is_list() ? static_cast<int64_t>(obj.as_list().size())
                                        : static_cast<int64_t>(utf8_length(obj.as_string()));
        if (i < 0) i += n;
        if (i >= 0 && i < n) {
            if (obj.is_list()) return obj.as_list()[static_cast<size_t>(i)];
            const auto cps = utf8_decode(obj.as_string());
            return Value::string(utf8_encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
        }
    } else if (key.is_string()) {
        return get_attr(obj, key.as_string());
    }
    std::string hint = "'";
    hint.append(obj.type_name()).append(" object' has no element ").append(to_repr(key));
    return Value::undefined(std::move(hint));
}

Expected<Value> slice_value(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                            std::optional<int64_t> step) {
    if (obj.is_undefined()) return undefined_error(obj);
    const int64_t st = step.value_or(1);
    if (st == 0) return Status::error("slice step cannot be zero");
    if (!obj.is_list() && !obj.is_string()) {
        return Status::error(std::string("'") + obj.type_name() + "' object is not subscriptable");
    }
    std::vector<uint32_t> cps;
    if (obj.is_string()) cps = utf8_decode(obj.as_string());
    const int64_t n = obj.is_list() ? static_cast<int64_t>(obj.as_list().size()) : static_cast<int64_t>(cps.size());
    adjust_slice(n, st, start, stop);
    ValueList items;
    std::string text;
    for (int64_t i = *start; st > 0 ? i < *stop : i > *stop; i += st) {
        if (obj.is_list()) items.push_back(obj.as_list()[static_cast<size_t>(i)]);
        else utf8_append(cps[static_cast<size_t>(i)], text);
    }
    return obj.is_list() ? Value::list(std::move(items)) : Value::string(std::move(text));
}

Expected<ValueList> iterate(const Value& v) {
    switch (v.kind()) {
        case ValueKind::Undefined: return ValueList{};
        case ValueKind::List: return v.as_list();
        case ValueKind::Dict: {
            ValueList keys;
            for (const auto& kv : v.as_dict().items) keys.push_back(kv.first);
            return keys;
        }
        case ValueKind::String: {
            ValueList chars;
            std::string one;
            for (uint32_t cp : utf8_decode(v.as_string())) {
                one.clear();
                utf8_append(cp, one);
                chars.push_back(Value::string(one));
            }
            return chars;
        }
        default: return Status::error(std::string("'") + v.type_name() + "' object is not iterable");
    }
}

Expected<int64_t> length_of(const Value& v) {
    switch (v.kind()) {
        case ValueKind::Undefined: return int64_t{0};
        case ValueKind::String: return static_cast<int64_t>(utf8_length(v.as_string()));
        case ValueKind::List: return static_cast<int64_t>(v.as_list().size());
        case ValueKind::Dict: return static_cast<int64_t>(v.as_dict().items.size());
        default: return Status::error(std::string("object of type '") + v.type_name() + "' has no len()");
    }
}

}  // namespace tessera::jinja
