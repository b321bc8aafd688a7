// The recursive-descent parser's class, shared by parser.cpp (statements)
// and parse_expr.cpp (expressions). Internal to the template engine.
#pragma once

#include <initializer_list>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "template/ast.h"
#include "template/lexer.h"

namespace tessera::jinja {

class Parser {
public:
    Parser(const std::vector<Token>& tokens, int max_nesting) : toks_(tokens), max_nesting_(max_nesting) {}

    Expected<Body> parse_all() {
        std::string which;
        Body body;
        TS_RETURN_IF_ERROR(parse_until({}, body, which));
        return body;
    }

private:
    // Counts nesting on entry and releases it on exit.
    struct DepthGuard {
        explicit DepthGuard(int& d) : depth(d) { ++depth; }
        ~DepthGuard() { --depth; }
        int& depth;
    };

    // Each extra operator in a left-associative chain deepens the tree by one;
    // counting it keeps the tree depth (and so evaluation recursion) bounded.
    struct ChainGuard {
        explicit ChainGuard(int& d) : depth(d) {}
        ~ChainGuard() { depth -= added; }
        void grow() {
            ++depth;
            ++added;
        }
        int& depth;
        int added = 0;
    };

    const Token& peek(size_t ahead = 0) const {
        const size_t i = pos_ + ahead;
        return i < toks_.size() ? toks_[i] : toks_.back();
    }
    const Token& next() {
        const Token& t = peek();
        if (pos_ < toks_.size() - 1) ++pos_;
        return t;
    }
    bool is_op(const char* op, size_t ahead = 0) const {
        return peek(ahead).type == TokenType::Operator && peek(ahead).text == op;
    }
    bool is_name(const char* name, size_t ahead = 0) const {
        return peek(ahead).type == TokenType::Name && peek(ahead).text == name;
    }
    bool skip_op(const char* op) {
        if (!is_op(op)) return false;
        next();
        return true;
    }
    bool skip_name(const char* name) {
        if (!is_name(name)) return false;
        next();
        return true;
    }
    Status error(const std::string& msg) const {
        return Status::error("template syntax error at line " + std::to_string(peek().line) + ": " + msg);
    }
    static std::string describe(const Token& t) {
        switch (t.type) {
            case TokenType::End: return "end of template";
            case TokenType::VarEnd: return "'}}'";
            case TokenType::BlockEnd: return "'%}'";
            case TokenType::Text: return "text";
            default: return "'" + t.text + "'";
        }
    }
    Status expect_op(const char* op) {
        if (skip_op(op)) return ok_status();
        return error(std::string("expected '") + op + "', got " + describe(peek()));
    }
    Status expect(TokenType type, const char* what) {
        if (peek().type != type) return error(std::string("expected ") + what + ", got " + describe(peek()));
        next();
        return ok_status();
    }
    Expected<std::string> expect_name() {
        if (peek().type != TokenType::Name) return error("expected a name, got " + describe(peek()));
        return next().text;
    }
    Status check_depth() const {
        if (depth_ > max_nesting_) return error("template nesting deeper than " + std::to_string(max_nesting_));
        return ok_status();
    }
    ExprPtr make(ExprKind kind, int line) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = line;
        return e;
    }

    Status parse_until(const std::vector<std::string>& ends, Body& out, std::string& which);
    Status parse_statement(Body& out);
    Status parse_if(NodePtr& node);
    Status parse_for(NodePtr& node);
    Status parse_set(NodePtr& node);
    Status parse_macro(NodePtr& node, bool is_call);
    Status parse_filter_block(NodePtr& node);
    Status parse_loop_control(NodePtr& node, bool is_break);
    Status parse_params(std::vector<MacroParam>& params);
    Status parse_end(const char* end_name, Body& body);

    Expected<ExprPtr> parse_expr(bool with_cond = true);
    // One left-associative precedence level: operands parsed by `operand`,
    // joined into `kind` nodes while the next token is one of `ops` (names
    // such as "and" when `names`, operators otherwise). Binary nodes keep
    // their operator in `name`.
    Expected<ExprPtr> parse_chain(Expected<ExprPtr> (Parser::*operand)(), std::initializer_list<const char*> ops,
                                  bool names, ExprKind kind);
    Expected<ExprPtr> parse_or();
    Expected<ExprPtr> parse_and();
    Expected<ExprPtr> parse_not();
    Expected<ExprPtr> parse_compare();
    Expected<ExprPtr> parse_math1();
    Expected<ExprPtr> parse_concat();
    Expected<ExprPtr> parse_math2();
    Expected<ExprPtr> parse_pow();
    Expected<ExprPtr> parse_filtered_unary() { return parse_unary(true); }
    Expected<ExprPtr> parse_unary(bool with_filter);
    Expected<ExprPtr> parse_primary();
    Expected<ExprPtr> parse_collection(const char* close, ExprKind kind, ExprPtr first, int line);
    Expected<ExprPtr> parse_postfix(ExprPtr node);
    Expected<ExprPtr> parse_subscript(ExprPtr node);
    Expected<ExprPtr> parse_filters(ExprPtr node);
    Expected<ExprPtr> parse_filter(ExprPtr node);
    Status parse_call_args(Expr& call);

    const std::vector<Token>& toks_;
    size_t pos_ = 0;
    int max_nesting_;
    int depth_ = 0;
    // for loops around the statement being parsed, within the current macro
    // or call block body (jinja2 compiles those to functions, so a loop
    // outside them does not count for break / continue).
    int loop_depth_ = 0;
};

}  // namespace tessera::jinja
