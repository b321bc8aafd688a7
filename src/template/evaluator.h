// Walks a parsed template against a set of variables and produces text. All
// state of one render lives in a Renderer; every limit of TemplateLimits is
// enforced here, and every error carries the line of the node that failed.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/status.h"
#include "template/ast.h"
#include "template/builtins.h"
#include "template/template_limits.h"
#include "template/value.h"

namespace tessera::jinja {

// One level of variable bindings: the globals, the render's variables, each
// loop iteration and each macro call get their own.
struct Scope {
    std::shared_ptr<Scope> parent;
    std::unordered_map<std::string, Value> vars;
    const Value* lookup(const std::string& name) const;
};
using ScopePtr = std::shared_ptr<Scope>;

struct CallableObj {
    enum class Kind { Macro, Caller, Global };
    Kind kind = Kind::Global;
    std::string name;
    const Node* node = nullptr;  // Macro or CallBlock node
    std::weak_ptr<Scope> scope;  // where it was defined; weak so scopes never form cycles
};

class Renderer {
public:
    // Runtime recursion guard: statements plus expressions being evaluated.
    static constexpr int kMaxEvalDepth = 3000;

    Renderer(const TemplateLimits& limits, std::optional<int64_t> now_epoch_seconds)
        : limits_(limits), env_{limits, now_epoch_seconds} {}

    // Renders `body` with `variables` as the template's top-level names.
    Expected<std::string> render(const Body& body, const Dict& variables);

private:
    // statements (evaluator.cpp)
    Status exec_body(const Body& body, const ScopePtr& scope, std::string& out);
    Status exec(const Node& node, const ScopePtr& scope, std::string& out);
    Status exec_for(const Node& node, const ScopePtr& scope, std::string& out);
    Status exec_set(const Node& node, const ScopePtr& scope, std::string& out);
    Status exec_call_block(const Node& node, const ScopePtr& scope, std::string& out);
    Status assign(const Node& node, const ScopePtr& scope, Value value);
    Status bind_targets(const std::vector<std::string>& targets, const Value& item, Scope& scope, int line);
    Expected<Value> call_macro(const CallableObj& fn, const CallArgs& args, const Value* caller, int line);

    // expressions (eval_expr.cpp)
    Expected<Value> eval(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_inner(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_collection(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_slice(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_call(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_filter(const Expr& e, const Value& input, const ScopePtr& scope);
    Expected<Value> eval_filter_chain(const Expr& e, const Value& input, const ScopePtr& scope);
    Expected<Value> eval_test(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_compare(const Expr& e, const ScopePtr& scope);
    Expected<Value> eval_unary(const Expr& e, const ScopePtr& scope);
    Expected<CallArgs> eval_args(const Expr& e, const ScopePtr& scope, size_t first_child);
    Expected<Value> call_value(const Value& callee, const CallArgs& args, const Value* caller, int line);
    Expected<Value> call_builtin(const CallableObj& fn, const CallArgs& args);

    // bookkeeping
    Status tick(int line);
    Status emit(std::string& out, const std::string& text, int line);
    Status at_line(int line, const Status& s) const;
    Status fail(int line, const std::string& msg) const;

    const TemplateLimits& limits_;
    BuiltinEnv env_;
    int64_t steps_ = 0;
    int64_t iterations_ = 0;
    int call_depth_ = 0;
    int eval_depth_ = 0;
    // Set by {% break %} / {% continue %}: bodies stop running statements
    // until the enclosing for loop takes the signal.
    enum class LoopSignal { None, Break, Continue };
    LoopSignal loop_signal_ = LoopSignal::None;
};

}  // namespace tessera::jinja
