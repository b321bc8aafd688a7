// Runtime values of the template engine: the few Python types chat templates
// see (None, bool, int, float, str, list, dict), jinja2's Undefined, namespace
// objects and callables. Containers are shared and immutable once built.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera::jinja {

enum class ValueKind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

class Value;
using ValueList = std::vector<Value>;

// An insertion-ordered mapping (Python dicts keep insertion order; tojson
// relies on it). Lookup is linear: template dicts are small.
struct Dict {
    std::vector<std::pair<Value, Value>> items;
    const Value* find(const Value& key) const;
    Value* find(const Value& key);
    void set(Value key, Value value);
};

// The object `namespace()` returns: the one mutable value (via `set ns.x`).
struct Namespace {
    Dict attrs;
};

struct CallableObj;  // defined by the evaluator (builtins and macros)

class Value {
public:
    Value() = default;  // Undefined
    static Value undefined(std::string hint = "");
    static Value none();
    static Value boolean(bool b);
    static Value integer(int64_t i);
    static Value number(double d);
    static Value string(std::string s);
    static Value list(ValueList items);
    // A list that prints as a Python tuple: (a, b). Otherwise it is a list.
    static Value tuple(ValueList items);
    static Value dict(Dict d);
    static Value namespace_obj(std::shared_ptr<Namespace> ns);
    static Value callable(std::shared_ptr<const CallableObj> c);

    ValueKind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == ValueKind::Undefined; }
    bool is_none() const { return kind_ == ValueKind::None; }
    bool is_string() const { return kind_ == ValueKind::String; }
    bool is_list() const { return kind_ == ValueKind::List; }
    bool is_dict() const { return kind_ == ValueKind::Dict; }
    bool is_int() const { return kind_ == ValueKind::Int || kind_ == ValueKind::Bool; }
    bool is_number() const { return is_int() || kind_ == ValueKind::Float; }

    bool as_bool() const { return std::get<bool>(data_); }
    int64_t as_int() const;  // Int or Bool
    double as_double() const;  // any number
    const std::string& as_string() const { return *std::get<StrPtr>(data_); }
    const ValueList& as_list() const { return *std::get<ListPtr>(data_); }
    const Dict& as_dict() const { return *std::get<DictPtr>(data_); }
    Namespace& as_namespace() const { return *std::get<NsPtr>(data_); }
    const CallableObj& as_callable() const { return *std::get<CallPtr>(data_); }
    // The name an Undefined was looked up under (for error messages).
    std::string undefined_hint() const;

    // Container nesting depth (0 for scalars) and whether a namespace is
    // reachable inside; both are fixed at construction and let the evaluator
    // refuse values that are too deep or would make a reference cycle.
    uint32_t depth() const { return depth_; }
    bool holds_namespace() const { return has_ns_; }
    bool is_tuple() const { return tuple_; }

    // Python truthiness.
    bool truthy() const;
    // Python type name for error messages ("str", "dict", ...).
    const char* type_name() const;

private:
    using StrPtr = std::shared_ptr<const std::string>;
    using ListPtr = std::shared_ptr<const ValueList>;
    using DictPtr = std::shared_ptr<const Dict>;
    using NsPtr = std::shared_ptr<Namespace>;
    using CallPtr = std::shared_ptr<const CallableObj>;
    void absorb(const Value& child);
    ValueKind kind_ = ValueKind::Undefined;
    uint32_t depth_ = 0;
    bool has_ns_ = false;
    bool tuple_ = false;
    std::variant<std::monostate, bool, int64_t, double, StrPtr, ListPtr, DictPtr, NsPtr, CallPtr> data_;
};

// Python `==` (1 == 1.0 == True; containers compare element-wise).
bool values_equal(const Value& a, const Value& b);

}  // namespace tessera::jinja
