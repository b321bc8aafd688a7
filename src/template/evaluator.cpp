// Statement execution for the Renderer: output, if, for (with jinja2's loop
// object, per-iteration scope, break and continue), set, macros and call blocks, and the
// bookkeeping that enforces the limits.
#include "template/evaluator.h"

#include <utility>

#include "template/operators.h"
#include "template/value_format.h"

namespace tessera::jinja {
namespace {

const char* const kGlobalNames[] = {"range", "dict", "strftime_now", "namespace", "raise_exception"};

}  // namespace

const Value* Scope::lookup(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent.get()) {
        auto it = s->vars.find(name);
        if (it != s->vars.end()) return &it->second;
    }
    return nullptr;
}

Expected<std::string> Renderer::render(const Body& body, const Dict& variables) {
    auto globals = std::make_shared<Scope>();
    for (const char* name : kGlobalNames) {
        auto fn = std::make_shared<CallableObj>();
        fn->kind = CallableObj::Kind::Global;
        fn->name = name;
        globals->vars[name] = Value::callable(std::move(fn));
    }
    auto top = std::make_shared<Scope>();
    top->parent = globals;
    for (const auto& [k, v] : variables.items) {
        if (k.is_string()) top->vars[k.as_string()] = v;
    }
    std::string out;
    TS_RETURN_IF_ERROR(exec_body(body, top, out));
    return out;
}

Status Renderer::fail(int line, const std::string& msg) const {
    return Status::error("template error at line " + std::to_string(line) + ": " + msg);
}

Status Renderer::at_line(int line, const Status& s) const {
    if (s.ok() || s.message().rfind("template ", 0) == 0) return s;
    return fail(line, s.message());
}

Status Renderer::tick(int line) {
    if (++steps_ > limits_.max_steps) {
        return fail(line, "evaluation step limit reached (" + std::to_string(limits_.max_steps) + " steps)");
    }
    return ok_status();
}

Status Renderer::emit(std::string& out, const std::string& text, int line) {
    if (out.size() + text.size() > limits_.max_output_bytes) {
        return fail(line, "output limit reached (" + std::to_string(limits_.max_output_bytes) + " bytes)");
    }
    out += text;
    return ok_status();
}

Status Renderer::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const NodePtr& node : body) {
        TS_RETURN_IF_ERROR(exec(*node, scope, out));
        if (loop_signal_ != LoopSignal::None) break;
    }
    return ok_status();
}

Status Renderer::exec(const Node& node, const ScopePtr& scope, std::string& out) {
    TS_RETURN_IF_ERROR(tick(node.line));
    if (eval_depth_ >= kMaxEvalDepth) return fail(node.line, "template evaluation nested too deeply");
    struct DepthGuard {
        int& d;
        ~DepthGuard() { --d; }
    } guard{++eval_depth_};
    switch (node.kind) {
        case NodeKind::Text: return emit(out, node.text, node.line);
        case NodeKind::Output: {
            auto v = eval(*node.expr, scope);
            if (!v) return v.status();
            return emit(out, to_str(*v), node.line);
        }
        case NodeKind::If:
            for (const auto& [cond, body] : node.branches) {
                auto c = eval(*cond, scope);
                if (!c) return c.status();
                if (c->truthy()) return exec_body(body, scope, out);
            }
            return exec_body(node.else_body, scope, out);
        case NodeKind::For: return exec_for(node, scope, out);
        case NodeKind::Set:
        case NodeKind::SetBlock: return exec_set(node, scope, out);
        case NodeKind::Macro: {
            auto fn = std::make_shared<CallableObj>();
            fn->kind = CallableObj::Kind::Macro;
            fn->name = node.text;
            fn->node = &node;
            fn->scope = scope;
            scope->vars[node.text] = Value::callable(std::move(fn));
            return ok_status();
        }
        case NodeKind::CallBlock: return exec_call_block(node, scope, out);
        case NodeKind::Break:
            loop_signal_ = LoopSignal::Break;
            return ok_status();
        case NodeKind::Continue:
            loop_signal_ = LoopSignal::Continue;
            return ok_status();
        case NodeKind::FilterBlock: {
            std::string captured;
            TS_RETURN_IF_ERROR(exec_body(node.body, scope, captured));
            if (loop_signal_ != LoopSignal::None) return ok_status();  // left mid-block, as jinja2 does
            auto v = eval_filter_chain(*node.filter, Value::string(std::move(captured)), scope);
            if (!v) return v.status();
            return emit(out, to_str(*v), node.line);
        }
    }
    return fail(node.line, "unknown statement");
}

Status Renderer::bind_targets(const std::vector<std::string>& targets, const Value& item, Scope& scope, int line) {
    if (targets.size() == 1) {
        scope.vars[targets[0]] = item;
        return ok_status();
    }
    auto parts = iterate(item);
    if (!parts || item.is_undefined()) return fail(line, "cannot unpack " + std::string(item.type_name()));
    if (parts->size() != targets.size()) {
        return fail(line, "expected " + std::to_string(targets.size()) + " values to unpack, got " +
                              std::to_string(parts->size()));
    }
    for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = (*parts)[i];
    return ok_status();
}

Status Renderer::exec_for(const Node& node, const ScopePtr& scope, std::string& out) {
    auto iterable = eval(*node.expr, scope);
    if (!iterable) return iterable.status();
    auto all = iterate(*iterable);
    if (!all) return at_line(node.line, all.status());
    ValueList items;
    for (Value& item : *all) {
        if (node.filter) {
            TS_RETURN_IF_ERROR(tick(node.line));
            auto probe = std::make_shared<Scope>();
            probe->parent = scope;
            TS_RETURN_IF_ERROR(bind_targets(node.targets, item, *probe, node.line));
            auto keep = eval(*node.filter, probe);
            if (!keep) return keep.status();
            if (!keep->truthy()) continue;
        }
        items.push_back(std::move(item));
    }
    const auto n = static_cast<int64_t>(items.size());
    // jinja2 runs the else body unless some iteration reached the end of the
    // loop body: so also when every iteration ended in break or continue.
    bool body_completed = false;
    for (int64_t i = 0; i < n; ++i) {
        if (++iterations_ > limits_.max_loop_iterations) {
            return fail(node.line, "loop iteration limit reached (" + std::to_string(limits_.max_loop_iterations) + ")");
        }
        auto frame = std::make_shared<Scope>();
        frame->parent = scope;
        TS_RETURN_IF_ERROR(bind_targets(node.targets, items[static_cast<size_t>(i)], *frame, node.line));
        Dict loop;
        loop.set(Value::string("index"), Value::integer(i + 1));
        loop.set(Value::string("index0"), Value::integer(i));
        loop.set(Value::string("revindex"), Value::integer(n - i));
        loop.set(Value::string("revindex0"), Value::integer(n - i - 1));
        loop.set(Value::string("first"), Value::boolean(i == 0));
        loop.set(Value::string("last"), Value::boolean(i == n - 1));
        loop.set(Value::string("length"), Value::integer(n));
        loop.set(Value::string("depth"), Value::integer(1));
        loop.set(Value::string("depth0"), Value::integer(0));
        if (i > 0) loop.set(Value::string("previtem"), items[static_cast<size_t>(i - 1)]);
        if (i + 1 < n) loop.set(Value::string("nextitem"), items[static_cast<size_t>(i + 1)]);
        frame->vars["loop"] = Value::dict(std::move(loop));
        TS_RETURN_IF_ERROR(exec_body(node.body, frame, out));
        const LoopSignal signal = std::exchange(loop_signal_, LoopSignal::None);
        if (signal == LoopSignal::Break) break;
        if (signal == LoopSignal::None) body_completed = true;
    }
    if (!body_completed) return exec_body(node.else_body, scope, out);
    return ok_status();
}

Status Renderer::assign(const Node& node, const ScopePtr& scope, Value value) {
    if (value.depth() > kMaxValueDepth) return fail(node.line, "value nested too deeply");
    if (!node.attr_target) return bind_targets(node.targets, value, *scope, node.line);
    const Value* target = scope->lookup(node.targets[0]);
    if (!target || target->kind() != ValueKind::Namespace) {
        return fail(node.line, "can only set attributes on a namespace() object ('" + node.targets[0] + "' is not one)");
    }
    if (value.holds_namespace()) return fail(node.line, "a namespace cannot be stored inside a namespace");
    target->as_namespace().attrs.set(Value::string(node.targets[1]), std::move(value));
    return ok_status();
}

Status Renderer::exec_set(const Node& node, const ScopePtr& scope, std::string& out) {
    (void)out;
    if (node.kind == NodeKind::Set) {
        auto v = eval(*node.expr, scope);
        if (!v) return v.status();
        return assign(node, scope, std::move(*v));
    }
    std::string captured;
    TS_RETURN_IF_ERROR(exec_body(node.body, scope, captured));
    if (loop_signal_ != LoopSignal::None) return ok_status();  // left mid-block: nothing assigned
    Value value = Value::string(std::move(captured));
    if (node.filter) {
        auto v = eval_filter_chain(*node.filter, value, scope);
        if (!v) return v.status();
        value = std::move(*v);
    }
    return assign(node, scope, std::move(value));
}

Status Renderer::exec_call_block(const Node& node, const ScopePtr& scope, std::string& out) {
    const Expr& call = *node.expr;
    auto callee = eval(*call.children[0], scope);
    if (!callee) return callee.status();
    auto args = eval_args(call, scope, 1);
    if (!args) return args.status();
    auto caller_fn = std::make_shared<CallableObj>();
    caller_fn->kind = CallableObj::Kind::Caller;
    caller_fn->name = "caller";
    caller_fn->node = &node;
    caller_fn->scope = scope;
    const Value caller = Value::callable(std::move(caller_fn));
    auto result = call_value(*callee, *args, &caller, node.line);
    if (!result) return result.status();
    return emit(out, to_str(*result), node.line);
}

// Runs a macro (or a call block's body, for `caller()`) in a fresh scope whose
// parent is the scope the macro was defined in.
Expected<Value> Renderer::call_macro(const CallableObj& fn, const CallArgs& args, const Value* caller, int line) {
    if (call_depth_ >= limits_.max_recursion_depth) {
        return fail(line, "recursion limit reached: macro calls nested deeper than " +
                              std::to_string(limits_.max_recursion_depth));
    }
    ScopePtr parent = fn.scope.lock();
    if (!parent) return fail(line, "macro '" + fn.name + "' called after its scope ended");
    const Node& def = *fn.node;
    if (args.pos.size() > def.params.size()) return fail(line, "macro '" + fn.name + "' takes " +
                                                                     std::to_string(def.params.size()) + " arguments");
    auto frame = std::make_shared<Scope>();
    frame->parent = parent;
    for (size_t i = 0; i < def.params.size(); ++i) {
        const MacroParam& p = def.params[i];
        const Value* given = args.get(i, p.name);
        if (given) {
            frame->vars[p.name] = *given;
        } else if (p.default_value) {
            auto d = eval(*p.default_value, frame);
            if (!d) return d;
            frame->vars[p.name] = std::move(*d);
        } else {
            frame->vars[p.name] = Value::undefined("'" + p.name + "'");
        }
    }
    for (const auto& [k, v] : args.kw) {
        bool known = false;
        for (const MacroParam& p : def.params) known = known || p.name == k;
        if (!known) return fail(line, "macro '" + fn.name + "' got an unexpected keyword argument '" + k + "'");
    }
    if (caller) frame->vars["caller"] = *caller;
    ++call_depth_;
    std::string captured;
    Status s = exec_body(def.body, frame, captured);
    --call_depth_;
    if (!s.ok()) return s;
    return Value::string(std::move(captured));
}

}  // namespace tessera::jinja
