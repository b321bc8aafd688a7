// Tests (`is defined`, `is divisibleby 3`), Python methods on str/dict/list,
// and the global functions range/dict/strftime_now. List mutation is refused
// exactly as jinja2's ImmutableSandboxedEnvironment refuses it.
#include <cstring>
#include <ctime>

#include "template/builtins.h"
#include "template/operators.h"
#include "template/text_util.h"
#include "template/value_format.h"

namespace tessera::jinja {
namespace {

// jinja2 sandbox's MAX_RANGE.
constexpr int64_t kMaxRange = 100000;

Expected<bool> compare_test(const std::string& name, const Value& value, const Value* other) {
    if (!other) return Status::error("test '" + name + "' needs an argument");
    static const char* const table[][2] = {{"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="},
                                           {"!=", "!="}, {"lt", "<"}, {"lessthan", "<"}, {"<", "<"},
                                           {"le", "<="}, {"<=", "<="}, {"gt", ">"}, {"greaterthan", ">"},
                                           {">", ">"}, {"ge", ">="}, {">=", ">="}, {"in", "in"}};
    for (const auto& row : table) {
        if (name == row[0]) return compare_op(row[1], value, *other);
    }
    return Status::error("no test named '" + name + "'");
}

bool has_alpha(const std::string& s, bool upper) {
    bool any = false;
    for (char c : s) {
        if ((c >= 'a' && c <= 'z') && upper) return false;
        if ((c >= 'A' && c <= 'Z') && !upper) return false;
        any = any || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }
    return any;
}

bool string_prefix_test(const std::string& s, const Value& arg, bool suffix) {
    auto one = [&](const Value& p) {
        if (!p.is_string()) return false;
        const std::string& x = p.as_string();
        if (x.size() > s.size()) return false;
        return suffix ? s.compare(s.size() - x.size(), x.size(), x) == 0 : s.compare(0, x.size(), x) == 0;
    };
    if (arg.is_list()) {
        for (const Value& p : arg.as_list()) {
            if (one(p)) return true;
        }
        return false;
    }
    return one(arg);
}

// str.format with {} / {0} / {name} fields (no format specs).
Expected<Value> str_format(const std::string& fmt, const CallArgs& args, size_t max_bytes) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {
            out += c;
            ++i;
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) return Status::error("Single '{' encountered in format string");
        const std::string field = fmt.substr(i + 1, close - i - 1);
        const Value* v = nullptr;
        if (field.empty()) {
            v = auto_index < args.pos.size() ? &args.pos[auto_index] : nullptr;
            ++auto_index;
        } else if (field.find_first_not_of("0123456789") == std::string::npos && field.size() < 9) {
            const size_t idx = std::strtoul(field.c_str(), nullptr, 10);
            v = idx < args.pos.size() ? &args.pos[idx] : nullptr;
        } else {
            v = args.get(SIZE_MAX, field);
        }
        if (!v) return Status::error("format field '{" + field + "}' has no argument");
        out += to_str(*v);
        if (out.size() > max_bytes) return Status::error("format result exceeds the output limit");
        i = close;
    }
    return Value::string(std::move(out));
}

Expected<Value> string_method(const std::string& s, const std::string& name, const CallArgs& args,
                              const BuiltinEnv& env, bool& found) {
    found = true;
    auto sarg = [&](size_t i, const char* key) {
        const Value* v = args.get(i, key);
        return v && v->is_string() ? v->as_string() : std::string();
    };
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        return Value::string(py_strip(s, sarg(0, "chars"), name != "rstrip", name != "lstrip"));
    }
    if (name == "upper") return Value::string(py_upper(s));
    if (name == "lower") return Value::string(py_lower(s));
    if (name == "title") return Value::string(py_title(s));
    if (name == "capitalize") return Value::string(py_capitalize(s));
    if (name == "startswith" || name == "endswith") {
        const Value* p = args.get(0, "prefix");
        if (!p) return Status::error(name + "() takes at least 1 argument");
        return Value::boolean(string_prefix_test(s, *p, name == "endswith"));
    }
    if (name == "split") {
        const Value* max = args.get(1, "maxsplit");
        if (const Value* sep = args.get(0, "sep"); sep && sep->is_string() && sep->as_string().empty()) {
            return Status::error("empty separator");
        }
        ValueList parts;
        for (auto& p : py_split(s, sarg(0, "sep"), max && max->is_int() ? max->as_int() : -1)) {
            parts.push_back(Value::string(std::move(p)));
        }
        return Value::list(std::move(parts));
    }
    if (name == "replace") {
        const Value* count = args.get(2, "count");
        std::string out = py_replace(s, sarg(0, "old"), sarg(1, "new"), count && count->is_int() ? count->as_int() : -1);
        if (out.size() > env.limits.max_output_bytes) return Status::error("replace result exceeds the output limit");
        return Value::string(std::move(out));
    }
    if (name == "format") return str_format(s, args, env.limits.max_output_bytes);
    if (name == "find") {
        const size_t at = s.find(sarg(0, "sub"));
        return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(utf8_length(s.substr(0, at))));
    }
    if (name == "count") {
        const std::string sub = sarg(0, "sub");
        if (sub.empty()) return Value::integer(static_cast<int64_t>(utf8_length(s)) + 1);
        int64_t n = 0;
        for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
        return Value::integer(n);
    }
    if (name == "join") {
        const Value* items = args.get(0, "iterable");
        if (!items) return Status::error("join() takes exactly one argument");
        CallArgs join_args;
        join_args.pos.push_back(Value::string(s));
        return apply_filter("join", *items, join_args, env);
    }
    if (name == "isdigit" || name == "isspace" || name == "isalpha") {
        if (s.empty()) return Value::boolean(false);
        for (uint32_t cp : utf8_decode(s)) {
            const bool ok = name == "isdigit" ? (cp >= '0' && cp <= '9')
                            : name == "isspace" ? is_py_space(cp)
                                                : ((cp | 32) >= 'a' && (cp | 32) <= 'z');
            if (!ok) return Value::boolean(false);
        }
        return Value::boolean(true);
    }
    found = false;
    return Value();
}

Expected<Value> dict_method(const Dict& d, const std::string& name, const CallArgs& args, bool& found) {
    found = true;
    if (name == "get") {
        const Value* key = args.get(0, "key");
        if (!key) return Status::error("get() needs a key");
        if (const Value* v = d.find(*key)) return *v;
        const Value* dflt = args.get(1, "default");
        return dflt ? *dflt : Value::none();
    }
    ValueList out;
    if (name == "items") {
        for (const auto& [k, v] : d.items) out.push_back(Value::tuple({k, v}));
    } else if (name == "keys") {
        for (const auto& kv : d.items) out.push_back(kv.first);
    } else if (name == "values") {
        for (const auto& kv : d.items) out.push_back(kv.second);
    } else {
        found = false;
        return Value();
    }
    return Value::list(std::move(out));
}

Expected<Value> do_range(const CallArgs& args) {
    int64_t start = 0, stop = 0, step = 1;
    for (const Value& v : args.pos) {
        if (!v.is_int()) return Status::error(std::string("range() needs integers, got '") + v.type_name() + "'");
    }
    if (args.pos.size() == 1) {
        stop = args.pos[0].as_int();
    } else if (args.pos.size() == 2 || args.pos.size() == 3) {
        start = args.pos[0].as_int();
        stop = args.pos[1].as_int();
        if (args.pos.size() == 3) step = args.pos[2].as_int();
    } else {
        return Status::error("range() takes 1 to 3 arguments");
    }
    if (step == 0) return Status::error("range() arg 3 must not be zero");
    const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
    const __int128 count = span <= 0 ? 0 : (span + (step > 0 ? step : -step) - 1) / (step > 0 ? step : -step);
    if (count > kMaxRange) {
        return Status::error("range too big: the sandbox blocks ranges larger than " + std::to_string(kMaxRange));
    }
    ValueList out;
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) out.push_back(Value::integer(start + i * step));
    return Value::list(std::move(out));
}

Expected<Value> do_strftime(const CallArgs& args, const BuiltinEnv& env) {
    const Value* fmt = args.get(0, "format");
    if (!fmt || !fmt->is_string()) return Status::error("strftime_now() needs a format string");
    if (fmt->as_string().size() > 256) return Status::error("strftime_now() format too long");
    const std::time_t now = env.now_epoch_seconds ? static_cast<std::time_t>(*env.now_epoch_seconds) : std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[1024];
    const size_t n = std::strftime(buf, sizeof buf, fmt->as_string().c_str(), &tm);
    return Value::string(std::string(buf, n));
}

}  // namespace

Expected<bool> apply_test(const std::string& name, const Value& value, const CallArgs& args) {
    const ValueKind k = value.kind();
    if (name == "defined") return !value.is_undefined();
    if (name == "undefined") return value.is_undefined();
    if (name == "none") return value.is_none();
    if (name == "string") return value.is_string();
    if (name == "mapping") return value.is_dict();
    if (name == "boolean") return k == ValueKind::Bool;
    if (name == "true") return k == ValueKind::Bool && value.as_bool();
    if (name == "false") return k == ValueKind::Bool && !value.as_bool();
    if (name == "number") return value.is_number();
    if (name == "integer") return k == ValueKind::Int;
    if (name == "float") return k == ValueKind::Float;
    if (name == "callable") return k == ValueKind::Callable;
    if (name == "iterable" || name == "sequence") {
        return value.is_undefined() || value.is_string() || value.is_list() || value.is_dict();
    }
    if (name == "lower" || name == "upper") return value.is_string() && has_alpha(value.as_string(), name == "upper");
    if (name == "sameas") {
        const Value* other = args.get(0, "other");
        if (!other) return Status::error("test 'sameas' needs an argument");
        return value.kind() == other->kind() && (value.is_none() || value.is_undefined() || k == ValueKind::Bool)
                   ? values_equal(value, *other)
                   : false;
    }
    if (name == "odd" || name == "even" || name == "divisibleby") {
        if (!value.is_int()) return Status::error("test '" + name + "' needs an integer");
        if (name != "divisibleby") return (value.as_int() % 2 != 0) == (name == "odd");
        const Value* d = args.get(0, "num");
        if (!d || !d->is_int() || d->as_int() == 0) return Status::error("divisibleby needs a non-zero integer");
        return value.as_int() % d->as_int() == 0;
    }
    if (name == "escaped") return false;
    return compare_test(name, value, args.get(0, "b"));
}

Expected<Value> call_method(const Value& obj, const std::string& name, const CallArgs& args,
                            const BuiltinEnv& env, bool& found) {
    found = false;
    if (obj.is_string()) return string_method(obj.as_string(), name, args, env, found);
    if (obj.is_dict()) return dict_method(obj.as_dict(), name, args, found);
    if (obj.is_list()) {
        static const char* const mutators[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
        for (const char* m : mutators) {
            if (name == m) {
                found = true;
                return Status::error("access to attribute '" + name + "' of 'list' object is unsafe");
            }
        }
        if (name == "index" || name == "count") {
            found = true;
            const Value* x = args.get(0, "value");
            if (!x) return Status::error(name + "() takes one argument");
            int64_t n = 0;
            const ValueList& items = obj.as_list();
            for (size_t i = 0; i < items.size(); ++i) {
                if (!values_equal(items[i], *x)) continue;
                if (name == "index") return Value::integer(static_cast<int64_t>(i));
                ++n;
            }
            if (name == "index") return Status::error(to_repr(*x) + " is not in list");
            return Value::integer(n);
        }
    }
    return Value();
}

bool is_global_function(const std::string& name) {
    return name == "range" || name == "dict" || name == "strftime_now";
}

Expected<Value> call_global(const std::string& name, const CallArgs& args, const BuiltinEnv& env) {
    if (name == "range") return do_range(args);
    if (name == "strftime_now") return do_strftime(args, env);
    if (name == "dict") {
        if (!args.pos.empty()) return Status::error("dict() takes keyword arguments only");
        Dict d;
        for (const auto& [k, v] : args.kw) d.set(Value::string(k), v);
        return Value::dict(std::move(d));
    }
    return Status::error("'" + name + "' is not callable");
}

}  // namespace tessera::jinja
