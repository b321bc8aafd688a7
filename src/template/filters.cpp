// jinja2's built-in filters as chat templates use them, plus `tojson` the way
// Hugging Face transformers defines it (json.dumps, ensure_ascii=False, keys
// in insertion order). Unknown filters are an error, as in jinja2.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "template/builtins.h"
#include "template/operators.h"
#include "template/text_util.h"
#include "template/value_format.h"

namespace tessera::jinja {
namespace {

using FilterResult = Expected<Value>;

Status arg_error(const std::string& filter, const std::string& msg) {
    return Status::error("filter '" + filter + "': " + msg);
}

std::string str_arg(const CallArgs& args, size_t i, const char* name, const std::string& dflt) {
    const Value* v = args.get(i, name);
    return v && !v->is_undefined() && !v->is_none() ? to_str(*v) : dflt;
}

bool bool_arg(const CallArgs& args, size_t i, const char* name, bool dflt) {
    const Value* v = args.get(i, name);
    return v ? v->truthy() : dflt;
}

// Follows a dotted attribute path ("a.b.0") the way jinja2's attrgetter does.
Expected<Value> attr_path(const Value& item, const std::string& path) {
    Value cur = item;
    for (const std::string& part : py_split(path, ".", -1)) {
        char* end = nullptr;
        const long long idx = std::strtoll(part.c_str(), &end, 10);
        const bool numeric = !part.empty() && end && *end == '\0';
        auto next = numeric ? get_item(cur, Value::integer(idx)) : get_item(cur, Value::string(part));
        if (!next) return next;
        cur = std::move(*next);
    }
    return cur;
}

// A sort/unique key: lower-cased strings unless case-sensitive.
Value fold_key(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return Value::string(py_lower(v.as_string()));
    return v;
}

Expected<ValueList> keyed(const ValueList& items, const Value* attribute, bool case_sensitive) {
    ValueList keys;
    for (const Value& item : items) {
        Value k = item;
        if (attribute && !attribute->is_undefined() && !attribute->is_none()) {
            auto a = attr_path(item, to_str(*attribute));
            if (!a) return a.status();
            k = std::move(*a);
        }
        keys.push_back(fold_key(k, case_sensitive));
    }
    return keys;
}

Status check_comparable(const ValueList& keys) {
    for (size_t i = 1; i < keys.size(); ++i) {
        auto c = compare_op("<", keys[0], keys[i]);
        if (!c) return c.status();
    }
    return ok_status();
}

FilterResult do_sort(const Value& input, const CallArgs& args) {
    auto items = iterate(input);
    if (!items) return items.status();
    auto keys = keyed(*items, args.get(2, "attribute"), bool_arg(args, 1, "case_sensitive", false));
    if (!keys) return keys.status();
    TS_RETURN_IF_ERROR(check_comparable(*keys));
    std::vector<size_t> order(items->size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const bool reverse = bool_arg(args, 0, "reverse", false);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        auto lt = compare_op("<", (*keys)[reverse ? b : a], (*keys)[reverse ? a : b]);
        return lt.ok() && *lt;
    });
    ValueList out;
    for (size_t i : order) out.push_back((*items)[i]);
    return Value::list(std::move(out));
}

FilterResult do_unique(const Value& input, const CallArgs& args) {
    auto items = iterate(input);
    if (!items) return items.status();
    auto keys = keyed(*items, args.get(1, "attribute"), bool_arg(args, 0, "case_sensitive", false));
    if (!keys) return keys.status();
    ValueList out, seen;
    for (size_t i = 0; i < items->size(); ++i) {
        bool dup = false;
        for (const Value& s : seen) dup = dup || values_equal(s, (*keys)[i]);
        if (dup) continue;
        seen.push_back((*keys)[i]);
        out.push_back((*items)[i]);
    }
    return Value::list(std::move(out));
}

// select/reject/selectattr/rejectattr share this: keep items whose test matches `keep`.
FilterResult do_select(const Value& input, const CallArgs& args, bool by_attr, bool keep) {
    auto items = iterate(input);
    if (!items) return items.status();
    size_t first_arg = 0;
    std::string attribute;
    if (by_attr) {
        if (args.pos.empty()) return Status::error("selectattr/rejectattr need an attribute name");
        attribute = to_str(args.pos[0]);
        first_arg = 1;
    }
    std::string test;
    CallArgs test_args;
    if (args.pos.size() > first_arg) {
        test = to_str(args.pos[first_arg]);
        test_args.pos.assign(args.pos.begin() + static_cast<long>(first_arg) + 1, args.pos.end());
        test_args.kw = args.kw;
    }
    ValueList out;
    for (const Value& item : *items) {
        Value subject = item;
        if (by_attr) {
            auto a = attr_path(item, attribute);
            if (!a) return a.status();
            subject = std::move(*a);
        }
        bool pass = subject.truthy();
        if (!test.empty()) {
            auto t = apply_test(test, subject, test_args);
            if (!t) return t.status();
            pass = *t;
        }
        if (pass == keep) out.push_back(item);
    }
    return Value::list(std::move(out));
}

FilterResult do_map(const Value& input, const CallArgs& args, const BuiltinEnv& env) {
    auto items = iterate(input);
    if (!items) return items.status();
    ValueList out;
    if (const Value* attribute = args.get(99, "attribute")) {
        // jinja2: default=none is the same as no default.
        const Value* dflt = args.get(99, "default");
        if (dflt != nullptr && dflt->is_none()) dflt = nullptr;
        for (const Value& item : *items) {
            auto a = attr_path(item, to_str(*attribute));
            if (!a) return a.status();
            out.push_back(a->is_undefined() && dflt ? *dflt : *a);
        }
        return Value::list(std::move(out));
    }
    if (args.pos.empty()) return Status::error("map needs a filter name or attribute=");
    CallArgs rest;
    rest.pos.assign(args.pos.begin() + 1, args.pos.end());
    rest.kw = args.kw;
    for (const Value& item : *items) {
        auto v = apply_filter(to_str(args.pos[0]), item, rest, env);
        if (!v) return v;
        out.push_back(std::move(*v));
    }
    return Value::list(std::move(out));
}

FilterResult do_join(const Value& input, const CallArgs& args, const BuiltinEnv& env) {
    auto items = iterate(input);
    if (!items) return items.status();
    const std::string sep = str_arg(args, 0, "d", "");
    const Value* attribute = args.get(1, "attribute");
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
        if (i) out += sep;
        Value item = (*items)[i];
        if (attribute) {
            auto a = attr_path(item, to_str(*attribute));
            if (!a) return a;
            item = std::move(*a);
        }
        out += to_str(item);
        if (out.size() > env.limits.max_output_bytes) return Status::error("join result exceeds the output limit");
    }
    return Value::string(std::move(out));
}

FilterResult do_tojson(const Value& input, const CallArgs& args) {
    std::optional<int> indent;
    if (const Value* v = args.get(0, "indent"); v && v->is_int()) {
        if (v->as_int() < 0 || v->as_int() > 64) return Status::error("tojson indent must be 0..64");
        indent = static_cast<int>(v->as_int());
    }
    JsonStyle style = default_json_style(indent);
    if (const Value* seps = args.get(99, "separators"); seps && seps->is_list() && seps->as_list().size() == 2) {
        style.item_separator = to_str(seps->as_list()[0]);
        style.key_separator = to_str(seps->as_list()[1]);
    }
    style.sort_keys = bool_arg(args, 99, "sort_keys", false);
    if (bool_arg(args, 99, "ensure_ascii", false)) return Status::error("tojson(ensure_ascii=true) is not supported");
    auto text = to_json(input, style);
    if (!text) return text.status();
    return Value::string(std::move(*text));
}

FilterResult do_indent(const Value& input, const CallArgs& args) {
    const Value* w = args.get(0, "width");
    std::string pad = w && w->is_string() ? w->as_string() : std::string(w && w->is_int() ? std::clamp<int64_t>(w->as_int(), 0, 256) : 4, ' ');
    const bool first = bool_arg(args, 1, "first", false), blank = bool_arg(args, 2, "blank", false);
    std::vector<std::string> lines = py_split(to_str(input) + "\n", "\n", -1);
    lines.pop_back();  // the split of the appended newline
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i) out += "\n";
        if (i && (blank || !lines[i].empty())) out += pad;
        out += lines[i];
    }
    return Value::string(first ? pad + out : out);
}

FilterResult do_int(const Value& input, const CallArgs& args) {
    const Value* dflt = args.get(0, "default");
    const Value fallback = dflt ? *dflt : Value::integer(0);
    if (input.is_int()) return Value::integer(input.as_int());
    if (input.kind() == ValueKind::Float) {
        const double d = std::trunc(input.as_double());
        if (!(std::fabs(d) < 9.2e18)) return fallback;
        return Value::integer(static_cast<int64_t>(d));
    }
    if (!input.is_string()) return fallback;
    const std::string s = py_strip(py_replace(input.as_string(), "_", "", -1), "", true, true);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && *end == '\0' && errno == 0) return Value::integer(v);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0' && std::fabs(d) < 9.2e18) return Value::integer(static_cast<int64_t>(d));
    return fallback;
}

FilterResult do_float(const Value& input, const CallArgs& args) {
    const Value* dflt = args.get(0, "default");
    const Value fallback = dflt ? *dflt : Value::number(0.0);
    if (input.is_number()) return Value::number(input.as_double());
    if (!input.is_string()) return fallback;
    const std::string s = py_strip(input.as_string(), "", true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return Value::number(d);
    return fallback;
}

FilterResult do_batch(const Value& input, const CallArgs& args) {
    auto items = iterate(input);
    if (!items) return items.status();
    const Value* n = args.get(0, "linecount");
    if (!n || !n->is_int() || n->as_int() <= 0) return Status::error("batch needs a positive line count");
    const Value* fill = args.get(1, "fill_with");
    const size_t size = static_cast<size_t>(n->as_int());
    ValueList out, cur;
    for (const Value& item : *items) {
        cur.push_back(item);
        if (cur.size() == size) out.push_back(Value::list(std::exchange(cur, {})));
    }
    if (!cur.empty()) {
        while (fill && !fill->is_none() && cur.size() < size) cur.push_back(*fill);
        out.push_back(Value::list(std::move(cur)));
    }
    return Value::list(std::move(out));
}

FilterResult do_sum(const Value& input, const CallArgs& args, const BuiltinEnv& env) {
    auto items = iterate(input);
    if (!items) return items.status();
    const Value* start = args.get(1, "start");
    Value total = start ? *start : Value::integer(0);
    for (const Value& item : *items) {
        Value x = item;
        if (const Value* attribute = args.get(0, "attribute")) {
            auto a = attr_path(item, to_str(*attribute));
            if (!a) return a;
            x = std::move(*a);
        }
        auto s = binary_op("+", total, x, env.limits.max_output_bytes);
        if (!s) return s;
        total = std::move(*s);
    }
    return total;
}

FilterResult do_minmax(const Value& input, const CallArgs& args, bool want_max) {
    auto items = iterate(input);
    if (!items) return items.status();
    if (items->empty()) return Value::undefined("No aggregated item, sequence was empty.");
    auto keys = keyed(*items, args.get(1, "attribute"), bool_arg(args, 0, "case_sensitive", false));
    if (!keys) return keys.status();
    size_t best = 0;
    for (size_t i = 1; i < keys->size(); ++i) {
        auto better = compare_op(want_max ? ">" : "<", (*keys)[i], (*keys)[best]);
        if (!better) return better.status();
        if (*better) best = i;
    }
    return (*items)[best];
}

FilterResult do_items(const Value& input) {
    if (input.is_undefined()) return Value::list({});
    if (!input.is_dict()) return Status::error("Can only get item pairs from a mapping.");
    ValueList out;
    for (const auto& [k, v] : input.as_dict().items) out.push_back(Value::tuple({k, v}));
    return Value::list(std::move(out));
}

FilterResult do_dictsort(const Value& input, const CallArgs& args) {
    if (!input.is_dict()) return Status::error("dictsort needs a mapping");
    const bool by_value = str_arg(args, 1, "by", "key") == "value";
    ValueList pairs, keys;
    for (const auto& [k, v] : input.as_dict().items) {
        pairs.push_back(Value::tuple({k, v}));
        keys.push_back(fold_key(by_value ? v : k, bool_arg(args, 0, "case_sensitive", false)));
    }
    TS_RETURN_IF_ERROR(check_comparable(keys));
    std::vector<size_t> order(pairs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const bool reverse = bool_arg(args, 2, "reverse", false);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        auto lt = compare_op("<", keys[reverse ? b : a], keys[reverse ? a : b]);
        return lt.ok() && *lt;
    });
    ValueList out;
    for (size_t i : order) out.push_back(pairs[i]);
    return Value::list(std::move(out));
}

FilterResult do_first_last(const Value& input, bool last) {
    auto items = iterate(input);
    if (!items) return items.status();
    if (items->empty()) return Value::undefined("No first item, sequence was empty.");
    return last ? items->back() : items->front();
}

FilterResult do_round(const Value& input, const CallArgs& args) {
    if (!input.is_number()) return Status::error("round needs a number");
    const Value* p = args.get(0, "precision");
    const int64_t precision = p && p->is_int() ? std::clamp<int64_t>(p->as_int(), 0, 15) : 0;
    const std::string method = str_arg(args, 1, "method", "common");
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = input.as_double() * scale;
    const double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::round(x);
    return Value::number(r / scale);
}

FilterResult string_filter(const std::string& name, const Value& input, const CallArgs& args) {
    const std::string s = to_str(input);
    if (name == "trim") return Value::string(py_strip(s, str_arg(args, 0, "chars", ""), true, true));
    if (name == "lower") return Value::string(py_lower(s));
    if (name == "upper") return Value::string(py_upper(s));
    if (name == "title") return Value::string(jinja_title(s));
    if (name == "capitalize") return Value::string(py_capitalize(s));
    if (name == "string") return Value::string(s);
    if (name == "wordcount") return Value::integer(static_cast<int64_t>(py_split(s, "", -1).size()));
    if (name == "replace") {
        const Value* count = args.get(2, "count");
        return Value::string(py_replace(s, str_arg(args, 0, "old", ""), str_arg(args, 1, "new", ""),
                                        count && count->is_int() ? count->as_int() : -1));
    }
    return arg_error(name, "unknown filter");
}

}  // namespace

const Value* CallArgs::get(size_t index, std::string_view name) const {
    for (const auto& [k, v] : kw) {
        if (k == name) return &v;
    }
    return index < pos.size() ? &pos[index] : nullptr;
}

Expected<Value> apply_filter(const std::string& name, const Value& input, const CallArgs& args,
                             const BuiltinEnv& env) {
    if (name == "safe" || (name == "list" && input.is_list())) return input;
    if (name == "default" || name == "d") {
        const bool use_default = input.is_undefined() || (bool_arg(args, 1, "boolean", false) && !input.truthy());
        const Value* dflt = args.get(0, "default_value");
        return use_default ? (dflt ? *dflt : Value::string("")) : input;
    }
    if (name == "length" || name == "count") {
        auto n = length_of(input);
        if (!n) return n.status();
        return Value::integer(*n);
    }
    if (name == "list") {
        auto items = iterate(input);
        if (!items) return items.status();
        return Value::list(std::move(*items));
    }
    if (name == "abs") {
        if (input.kind() == ValueKind::Float) return Value::number(std::fabs(input.as_double()));
        if (!input.is_int() || input.as_int() == INT64_MIN) return Status::error("bad operand type for abs()");
        return Value::integer(std::llabs(input.as_int()));
    }
    if (name == "reverse") {
        if (input.is_string()) {
            auto cps = utf8_decode(input.as_string());
            std::reverse(cps.begin(), cps.end());
            return Value::string(utf8_encode(cps, 0, cps.size()));
        }
        auto items = iterate(input);
        if (!items) return items.status();
        std::reverse(items->begin(), items->end());
        return Value::list(std::move(*items));
    }
    if (name == "first" || name == "last") return do_first_last(input, name == "last");
    if (name == "items") return do_items(input);
    if (name == "dictsort") return do_dictsort(input, args);
    if (name == "join") return do_join(input, args, env);
    if (name == "tojson") return do_tojson(input, args);
    if (name == "sort") return do_sort(input, args);
    if (name == "unique") return do_unique(input, args);
    if (name == "select" || name == "reject") return do_select(input, args, false, name == "select");
    if (name == "selectattr" || name == "rejectattr") return do_select(input, args, true, name == "selectattr");
    if (name == "map") return do_map(input, args, env);
    if (name == "indent") return do_indent(input, args);
    if (name == "int") return do_int(input, args);
    if (name == "float") return do_float(input, args);
    if (name == "batch") return do_batch(input, args);
    if (name == "sum") return do_sum(input, args, env);
    if (name == "min" || name == "max") return do_minmax(input, args, name == "max");
    if (name == "round") return do_round(input, args);
    if (name == "attr") return get_attr(input, str_arg(args, 0, "name", ""));
    static const char* const string_filters[] = {"trim", "lower", "upper", "title", "capitalize",
                                                 "string", "replace", "wordcount"};
    for (const char* f : string_filters) {
        if (name == f) return string_filter(name, input, args);
    }
    return Status::error("no filter named '" + name + "'");
}

}  // namespace tessera::jinja
