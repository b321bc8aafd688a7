// Expression evaluation for the Renderer: names, literals, attribute/item
// access, calls (macros, methods, globals), filters, tests, operators with
// Python's short-circuit rules.
#include "template/evaluator.h"
#include "template/operators.h"
#include "template/value_format.h"

namespace tessera::jinja {
Expected<Value> Renderer::eval(const Expr& e, const ScopePtr& scope) {
    TS_RETURN_IF_ERROR(tick(e.line));
    if (eval_depth_ >= kMaxEvalDepth) return fail(e.line, "template evaluation nested too deeply");
    ++eval_depth_;
    auto v = eval_inner(e, scope);
    --eval_depth_;
    if (!v) return at_line(e.line, v.status());
    if (v->depth() > kMaxValueDepth) return fail(e.line, "value nested too deeply");
    return v;
}

Expected<Value> Renderer::eval_inner(const Expr& e, const ScopePtr& scope) {
    switch (e.kind) {
        case ExprKind::Literal: return e.literal;
        case ExprKind::Name: {
            const Value* v = scope->lookup(e.name);
            return v ? *v : Value::undefined("'" + e.name + "'");
        }
        case ExprKind::List:
        case ExprKind::Tuple:
        case ExprKind::DictLit: return eval_collection(e, scope);
        case ExprKind::Attr: {
            auto obj = eval(*e.children[0], scope);
            if (!obj) return obj;
            return get_attr(*obj, e.name);
        }
        case ExprKind::Item: {
            auto obj = eval(*e.children[0], scope);
            if (!obj) return obj;
            auto key = eval(*e.children[1], scope);
            if (!key) return key;
            return get_item(*obj, *key);
        }
        case ExprKind::Slice: return eval_slice(e, scope);
        case ExprKind::Call: return eval_call(e, scope);
        case ExprKind::Filter: {
            auto input = eval(*e.children[0], scope);
            if (!input) return input;
            return eval_filter(e, *input, scope);
        }
        case ExprKind::Test: return eval_test(e, scope);
        case ExprKind::Compare: return eval_compare(e, scope);
        case ExprKind::And:
        case ExprKind::Or: {
            auto left = eval(*e.children[0], scope);
            if (!left) return left;
            if (left->truthy() == (e.kind == ExprKind::Or)) return left;
            return eval(*e.children[1], scope);
        }
        case ExprKind::Cond: {
            auto cond = eval(*e.children[1], scope);
            if (!cond) return cond;
            if (cond->truthy()) return eval(*e.children[0], scope);
            if (!e.children[2]) return Value::undefined("conditional expression without else");
            return eval(*e.children[2], scope);
        }
        case ExprKind::Binary: {
            auto a = eval(*e.children[0], scope);
            if (!a) return a;
            auto b = eval(*e.children[1], scope);
            if (!b) return b;
            return binary_op(e.name, *a, *b, limits_.max_output_bytes);
        }
        case ExprKind::Not:
        case ExprKind::Negate:
        case ExprKind::Plus: return eval_unary(e, scope);
    }
    return Status::error("unknown expression");
}

Expected<Value> Renderer::eval_unary(const Expr& e, const ScopePtr& scope) {
    auto v = eval(*e.children[0], scope);
    if (!v) return v;
    if (e.kind == ExprKind::Not) return Value::boolean(!v->truthy());
    if (v->is_undefined()) return undefined_error(*v);
    if (v->kind() == ValueKind::Float) return Value::number(e.kind == ExprKind::Negate ? -v->as_double() : v->as_double());
    if (!v->is_int()) return Status::error(std::string("bad operand type for unary -: '") + v->type_name() + "'");
    if (e.kind == ExprKind::Plus) return Value::integer(v->as_int());
    if (v->as_int() == INT64_MIN) return Status::error("integer overflow in unary -");
    return Value::integer(-v->as_int());
}

Expected<Value> Renderer::eval_collection(const Expr& e, const ScopePtr& scope) {
    if (e.children.size() > limits_.max_output_bytes) return Status::error("literal too large");
    if (e.kind == ExprKind::DictLit) {
        Dict d;
        for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
            auto k = eval(*e.children[i], scope);
            if (!k) return k;
            auto v = eval(*e.children[i + 1], scope);
            if (!v) return v;
            d.set(std::move(*k), std::move(*v));
        }
        return Value::dict(std::move(d));
    }
    ValueList items;
    for (const ExprPtr& child : e.children) {
        auto v = eval(*child, scope);
        if (!v) return v;
        items.push_back(std::move(*v));
    }
    return e.kind == ExprKind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

Expected<Value> Renderer::eval_slice(const Expr& e, const ScopePtr& scope) {
    auto obj = eval(*e.children[0], scope);
    if (!obj) return obj;
    std::optional<int64_t> parts[3];
    for (int i = 0; i < 3; ++i) {
        const ExprPtr& child = e.children[static_cast<size_t>(i) + 1];
        if (!child) continue;
        auto v = eval(*child, scope);
        if (!v) return v;
        if (v->is_none()) continue;
        if (!v->is_int()) return Status::error("slice indices must be integers or None");
        parts[i] = v->as_int();
    }
    return slice_value(*obj, parts[0], parts[1], parts[2]);
}

Expected<CallArgs> Renderer::eval_args(const Expr& e, const ScopePtr& scope, size_t first_child) {
    CallArgs args;
    for (size_t i = first_child; i < e.children.size(); ++i) {
        auto v = eval(*e.children[i], scope);
        if (!v) return v.status();
        args.pos.push_back(std::move(*v));
    }
    for (const auto& [name, expr] : e.kwargs) {
        auto v = eval(*expr, scope);
        if (!v) return v.status();
        args.kw.emplace_back(name, std::move(*v));
    }
    return args;
}

Expected<Value> Renderer::eval_call(const Expr& e, const ScopePtr& scope) {
    const Expr& callee_expr = *e.children[0];
    if (callee_expr.kind == ExprKind::Attr) {
        auto obj = eval(*callee_expr.children[0], scope);
        if (!obj) return obj;
        if (obj->is_undefined()) return undefined_error(*obj);
        auto args = eval_args(e, scope, 1);
        if (!args) return args.status();
        bool found = false;
        auto result = call_method(*obj, callee_expr.name, *args, env_, found);
        if (found || !result) return result;
        auto attr = get_attr(*obj, callee_expr.name);
        if (!attr) return attr;
        if (attr->is_undefined()) {
            return Status::error("'" + std::string(obj->type_name()) + "' object has no method '" + callee_expr.name + "'");
        }
        return call_value(*attr, *args, nullptr, e.line);
    }
    auto callee = eval(callee_expr, scope);
    if (!callee) return callee;
    auto args = eval_args(e, scope, 1);
    if (!args) return args.status();
    return call_value(*callee, *args, nullptr, e.line);
}

Expected<Value> Renderer::call_value(const Value& callee, const CallArgs& args, const Value* caller, int line) {
    if (callee.is_undefined()) return undefined_error(callee);
    if (callee.kind() != ValueKind::Callable) {
        return Status::error(std::string("'") + callee.type_name() + "' object is not callable");
    }
    const CallableObj& fn = callee.as_callable();
    if (fn.kind == CallableObj::Kind::Global) return call_builtin(fn, args);
    return call_macro(fn, args, caller, line);
}

Expected<Value> Renderer::call_builtin(const CallableObj& fn, const CallArgs& args) {
    if (fn.name == "raise_exception") {
        const Value* msg = args.get(0, "message");
        return Status::error(msg ? to_str(*msg) : std::string("raise_exception() called"));
    }
    if (fn.name == "namespace") {
        auto ns = std::make_shared<Namespace>();
        for (const Value& v : args.pos) {
            if (!v.is_dict()) return Status::error("namespace() positional arguments must be dicts");
            for (const auto& [k, x] : v.as_dict().items) ns->attrs.set(k, x);
        }
        for (const auto& [k, v] : args.kw) {
            if (v.holds_namespace()) return Status::error("a namespace cannot be stored inside a namespace");
            ns->attrs.set(Value::string(k), v);
        }
        return Value::namespace_obj(std::move(ns));
    }
    return call_global(fn.name, args, env_);
}

// Applies the single filter `e` to `input` (its input child is already evaluated).
Expected<Value> Renderer::eval_filter(const Expr& e, const Value& input, const ScopePtr& scope) {
    auto args = eval_args(e, scope, 1);
    if (!args) return args.status();
    auto result = apply_filter(e.name, input, *args, env_);
    if (!result) return at_line(e.line, result.status());
    return result;
}

// A filter or set block's chain `| a | b`: the innermost input child is null.
Expected<Value> Renderer::eval_filter_chain(const Expr& e, const Value& input, const ScopePtr& scope) {
    if (!e.children[0]) return eval_filter(e, input, scope);
    auto inner = eval_filter_chain(*e.children[0], input, scope);
    if (!inner) return inner;
    return eval_filter(e, *inner, scope);
}

Expected<Value> Renderer::eval_test(const Expr& e, const ScopePtr& scope) {
    auto subject = eval(*e.children[0], scope);
    if (!subject) return subject;
    auto args = eval_args(e, scope, 1);
    if (!args) return args.status();
    auto r = apply_test(e.name, *subject, *args);
    if (!r) return r.status();
    return Value::boolean(*r != e.negated);
}

Expected<Value> Renderer::eval_compare(const Expr& e, const ScopePtr& scope) {
    auto left = eval(*e.children[0], scope);
    if (!left) return left;
    Value a = std::move(*left);
    for (size_t i = 0; i < e.ops.size(); ++i) {
        auto right = eval(*e.children[i + 1], scope);
        if (!right) return right;
        auto r = compare_op(e.ops[i], a, *right);
        if (!r) return r.status();
        if (!*r) return Value::boolean(false);
        a = std::move(*right);
    }
    return Value::boolean(true);
}

}  // namespace tessera::jinja
