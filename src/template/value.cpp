// Construction, truthiness and equality of template values, following the
// Python semantics that jinja2 templates are written against.
#include "template/value.h"

#include <algorithm>

namespace tessera::jinja {

const Value* Dict::find(const Value& key) const {
    for (const auto& [k, v] : items) {
        if (values_equal(k, key)) return &v;
    }
    return nullptr;
}

Value* Dict::find(const Value& key) {
    for (auto& [k, v] : items) {
        if (values_equal(k, key)) return &v;
    }
    return nullptr;
}

void Dict::set(Value key, Value value) {
    if (Value* existing = find(key)) {
        *existing = std::move(value);
        return;
    }
    items.emplace_back(std::move(key), std::move(value));
}

Value Value::undefined(std::string hint) {
    Value v;
    v.data_ = std::make_shared<const std::string>(std::move(hint));
    return v;
}

Value Value::none() {
    Value v;
    v.kind_ = ValueKind::None;
    return v;
}

Value Value::boolean(bool b) {
    Value v;
    v.kind_ = ValueKind::Bool;
    v.data_ = b;
    return v;
}

Value Value::integer(int64_t i) {
    Value v;
    v.kind_ = ValueKind::Int;
    v.data_ = i;
    return v;
}

Value Value::number(double d) {
    Value v;
    v.kind_ = ValueKind::Float;
    v.data_ = d;
    return v;
}

Value Value::string(std::string s) {
    Value v;
    v.kind_ = ValueKind::String;
    v.data_ = std::make_shared<const std::string>(std::move(s));
    return v;
}

void Value::absorb(const Value& child) {
    depth_ = std::max(depth_, child.depth_ + 1);
    has_ns_ = has_ns_ || child.has_ns_;
}

Value Value::list(ValueList items) {
    Value v;
    v.kind_ = ValueKind::List;
    v.depth_ = 1;
    for (const Value& item : items) v.absorb(item);
    v.data_ = std::make_shared<const ValueList>(std::move(items));
    return v;
}

Value Value::tuple(ValueList items) {
    Value v = list(std::move(items));
    v.tuple_ = true;
    return v;
}

Value Value::dict(Dict d) {
    Value v;
    v.kind_ = ValueKind::Dict;
    v.depth_ = 1;
    for (const auto& [key, value] : d.items) {
        v.absorb(key);
        v.absorb(value);
    }
    v.data_ = std::make_shared<const Dict>(std::move(d));
    return v;
}

Value Value::namespace_obj(std::shared_ptr<Namespace> ns) {
    Value v;
    v.kind_ = ValueKind::Namespace;
    v.depth_ = 1;
    v.has_ns_ = true;
    v.data_ = std::move(ns);
    return v;
}

Value Value::callable(std::shared_ptr<const CallableObj> c) {
    Value v;
    v.kind_ = ValueKind::Callable;
    v.data_ = std::move(c);
    return v;
}

int64_t Value::as_int() const {
    if (kind_ == ValueKind::Bool) return as_bool() ? 1 : 0;
    return std::get<int64_t>(data_);
}

double Value::as_double() const {
    if (kind_ == ValueKind::Float) return std::get<double>(data_);
    return static_cast<double>(as_int());
}

std::string Value::undefined_hint() const {
    if (kind_ != ValueKind::Undefined) return "";
    if (const auto* p = std::get_if<StrPtr>(&data_)) return **p;
    return "";
}

bool Value::truthy() const {
    switch (kind_) {
        case ValueKind::Undefined:
        case ValueKind::None: return false;
        case ValueKind::Bool: return as_bool();
        case ValueKind::Int: return as_int() != 0;
        case ValueKind::Float: return as_double() != 0.0;
        case ValueKind::String: return !as_string().empty();
        case ValueKind::List: return !as_list().empty();
        case ValueKind::Dict: return !as_dict().items.empty();
        case ValueKind::Namespace:
        case ValueKind::Callable: return true;
    }
    return false;
}

const char* Value::type_name() const {
    switch (kind_) {
        case ValueKind::Undefined: return "Undefined";
        case ValueKind::None: return "NoneType";
        case ValueKind::Bool: return "bool";
        case ValueKind::Int: return "int";
        case ValueKind::Float: return "float";
        case ValueKind::String: return "str";
        case ValueKind::List: return "list";
        case ValueKind::Dict: return "dict";
        case ValueKind::Namespace: return "Namespace";
        case ValueKind::Callable: return "function";
    }
    return "object";
}

static bool lists_equal(const ValueList& a, const ValueList& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!values_equal(a[i], b[i])) return false;
    }
    return true;
}

static bool dicts_equal(const Dict& a, const Dict& b) {
    if (a.items.size() != b.items.size()) return false;
    for (const auto& [k, v] : a.items) {
        const Value* other = b.find(k);
        if (!other || !values_equal(v, *other)) return false;
    }
    return true;
}

bool values_equal(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.kind() == ValueKind::Float || b.kind() == ValueKind::Float) {
            return a.as_double() == b.as_double();
        }
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case ValueKind::Undefined:
        case ValueKind::None: return true;
        case ValueKind::String: return a.as_string() == b.as_string();
        case ValueKind::List: return lists_equal(a.as_list(), b.as_list());
        case ValueKind::Dict: return dicts_equal(a.as_dict(), b.as_dict());
        case ValueKind::Namespace: return &a.as_namespace() == &b.as_namespace();
        case ValueKind::Callable: return &a.as_callable() == &b.as_callable();
        default: return false;
    }
}

}  // namespace tessera::jinja
