// Expression parsing. Precedence follows jinja2's parser: condexpr < or <
// and < not < compare < +,- < ~ < *,/,//,% < ** < unary < filters/tests <
// postfix. Every left-associative chain counts toward the nesting cap.
#include <cstdlib>

#include "template/parser_impl.h"

namespace tessera::jinja {

Expected<ExprPtr> Parser::parse_expr(bool with_cond) {
    DepthGuard guard(depth_);
    TS_RETURN_IF_ERROR(check_depth());
    auto left = parse_or();
    if (!left || !with_cond) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_name("if")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = next().line;
        auto cond = parse_or();
        if (!cond) return cond;
        auto node = make(ExprKind::Cond, line);
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*cond));
        if (skip_name("else")) {
            auto other = parse_expr();
            if (!other) return other;
            node->children.push_back(std::move(*other));
        } else {
            node->children.push_back(nullptr);
        }
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_chain(Expected<ExprPtr> (Parser::*operand)(), std::initializer_list<const char*> ops,
                                      bool names, ExprKind kind) {
    auto left = (this->*operand)();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    auto at_op = [&] {
        for (const char* op : ops) {
            if (names ? is_name(op) : is_op(op)) return true;
        }
        return false;
    };
    while (at_op()) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const Token& op = next();
        auto right = (this->*operand)();
        if (!right) return right;
        auto node = make(kind, op.line);
        if (kind == ExprKind::Binary) node->name = op.text;
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_or() { return parse_chain(&Parser::parse_and, {"or"}, true, ExprKind::Or); }

Expected<ExprPtr> Parser::parse_and() { return parse_chain(&Parser::parse_not, {"and"}, true, ExprKind::And); }

Expected<ExprPtr> Parser::parse_not() {
    if (!is_name("not")) return parse_compare();
    DepthGuard guard(depth_);
    TS_RETURN_IF_ERROR(check_depth());
    const int line = next().line;
    auto inner = parse_not();
    if (!inner) return inner;
    auto node = make(ExprKind::Not, line);
    node->children.push_back(std::move(*inner));
    return node;
}

Expected<ExprPtr> Parser::parse_compare() {
    auto first = parse_math1();
    if (!first) return first;
    ExprPtr expr = std::move(*first);
    ExprPtr cmp;
    while (true) {
        std::string op;
        const Token& t = peek();
        if (t.type == TokenType::Operator &&
            (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">=")) {
            op = next().text;
        } else if (is_name("in")) {
            next();
            op = "in";
        } else if (is_name("not") && is_name("in", 1)) {
            next();
            next();
            op = "not in";
        } else {
            break;
        }
        auto right = parse_math1();
        if (!right) return right;
        if (!cmp) {
            cmp = make(ExprKind::Compare, t.line);
            cmp->children.push_back(std::move(expr));
        }
        cmp->ops.push_back(op);
        cmp->children.push_back(std::move(*right));
    }
    return cmp ? std::move(cmp) : std::move(expr);
}

Expected<ExprPtr> Parser::parse_math1() {
    return parse_chain(&Parser::parse_concat, {"+", "-"}, false, ExprKind::Binary);
}

Expected<ExprPtr> Parser::parse_concat() {
    return parse_chain(&Parser::parse_math2, {"~"}, false, ExprKind::Binary);
}

Expected<ExprPtr> Parser::parse_math2() {
    return parse_chain(&Parser::parse_pow, {"*", "/", "//", "%"}, false, ExprKind::Binary);
}

Expected<ExprPtr> Parser::parse_pow() {
    return parse_chain(&Parser::parse_filtered_unary, {"**"}, false, ExprKind::Binary);
}

Expected<ExprPtr> Parser::parse_unary(bool with_filter) {
    DepthGuard guard(depth_);
    TS_RETURN_IF_ERROR(check_depth());
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
        const Token& op = next();
        auto inner = parse_unary(false);
        if (!inner) return inner;
        node = make(op.text == "-" ? ExprKind::Negate : ExprKind::Plus, op.line);
        node->children.push_back(std::move(*inner));
    } else {
        auto primary = parse_primary();
        if (!primary) return primary;
        node = std::move(*primary);
    }
    auto post = parse_postfix(std::move(node));
    if (!post || !with_filter) return post;
    return parse_filters(std::move(*post));
}

Expected<ExprPtr> Parser::parse_primary() {
    const Token& t = peek();
    const int line = t.line;
    if (t.type == TokenType::Name) {
        next();
        auto node = make(ExprKind::Literal, line);
        if (t.text == "true" || t.text == "True") {
            node->literal = Value::boolean(true);
        } else if (t.text == "false" || t.text == "False") {
            node->literal = Value::boolean(false);
        } else if (t.text == "none" || t.text == "None") {
            node->literal = Value::none();
        } else {
            node->kind = ExprKind::Name;
            node->name = t.text;
        }
        return node;
    }
    if (t.type == TokenType::String) {
        std::string s;
        while (peek().type == TokenType::String) s += next().text;
        auto node = make(ExprKind::Literal, line);
        node->literal = Value::string(std::move(s));
        return node;
    }
    if (t.type == TokenType::Integer || t.type == TokenType::Float) {
        next();
        auto node = make(ExprKind::Literal, line);
        node->literal = t.type == TokenType::Integer ? Value::integer(std::strtoll(t.text.c_str(), nullptr, 10))
                                                     : Value::number(std::strtod(t.text.c_str(), nullptr));
        return node;
    }
    if (skip_op("(")) {
        if (skip_op(")")) return make(ExprKind::Tuple, line);
        auto inner = parse_expr();
        if (!inner) return inner;
        if (is_op(",")) return parse_collection(")", ExprKind::Tuple, std::move(*inner), line);
        TS_RETURN_IF_ERROR(expect_op(")"));
        return inner;
    }
    if (skip_op("[")) return parse_collection("]", ExprKind::List, nullptr, line);
    if (skip_op("{")) return parse_collection("}", ExprKind::DictLit, nullptr, line);
    return error("unexpected " + describe(t) + " in expression");
}

// Items of a list, tuple or dict literal up to `close` (the opener is consumed).
Expected<ExprPtr> Parser::parse_collection(const char* close, ExprKind kind, ExprPtr first, int line) {
    auto node = make(kind, line);
    if (first) node->children.push_back(std::move(first));
    while (!is_op(close)) {
        if (!node->children.empty()) TS_RETURN_IF_ERROR(expect_op(","));
        if (is_op(close)) break;
        auto item = parse_expr();
        if (!item) return item;
        node->children.push_back(std::move(*item));
        if (kind == ExprKind::DictLit) {
            TS_RETURN_IF_ERROR(expect_op(":"));
            auto value = parse_expr();
            if (!value) return value;
            node->children.push_back(std::move(*value));
        }
    }
    TS_RETURN_IF_ERROR(expect_op(close));
    return node;
}

Expected<ExprPtr> Parser::parse_postfix(ExprPtr node) {
    ChainGuard chain(depth_);
    while (true) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = peek().line;
        if (skip_op(".")) {
            const Token& t = next();
            if (t.type == TokenType::Name) {
                auto attr = make(ExprKind::Attr, line);
                attr->name = t.text;
                attr->children.push_back(std::move(node));
                node = std::move(attr);
            } else if (t.type == TokenType::Integer) {
                auto item = make(ExprKind::Item, line);
                auto index = make(ExprKind::Literal, line);
                index->literal = Value::integer(std::strtoll(t.text.c_str(), nullptr, 10));
                item->children.push_back(std::move(node));
                item->children.push_back(std::move(index));
                node = std::move(item);
            } else {
                return error("expected an attribute name after '.'");
            }
        } else if (skip_op("[")) {
            auto sub = parse_subscript(std::move(node));
            if (!sub) return sub;
            node = std::move(*sub);
        } else if (is_op("(")) {
            auto call = make(ExprKind::Call, line);
            call->children.push_back(std::move(node));
            TS_RETURN_IF_ERROR(parse_call_args(*call));
            node = std::move(call);
        } else {
            return node;
        }
    }
}

Expected<ExprPtr> Parser::parse_subscript(ExprPtr node) {
    const int line = peek().line;
    ExprPtr parts[3];
    int n_colons = 0;
    while (true) {
        if (is_op("]")) break;
        if (skip_op(":")) {
            if (++n_colons > 2) return error("too many ':' in slice");
            continue;
        }
        if (parts[n_colons]) return error("expected ':' or ']' in subscript");
        auto e = parse_expr();
        if (!e) return e;
        parts[n_colons] = std::move(*e);
    }
    TS_RETURN_IF_ERROR(expect_op("]"));
    if (n_colons == 0 && !parts[0]) return error("empty subscript");
    auto out = make(n_colons == 0 ? ExprKind::Item : ExprKind::Slice, line);
    out->children.push_back(std::move(node));
    out->children.push_back(std::move(parts[0]));
    if (n_colons > 0) {
        out->children.push_back(std::move(parts[1]));
        out->children.push_back(std::move(parts[2]));
    }
    return out;
}

Status Parser::parse_call_args(Expr& call) {
    TS_RETURN_IF_ERROR(expect_op("("));
    bool first = true;
    while (!is_op(")")) {
        if (!first) TS_RETURN_IF_ERROR(expect_op(","));
        first = false;
        if (is_op(")")) break;
        if (peek().type == TokenType::Name && is_op("=", 1)) {
            std::string key = next().text;
            next();
            auto value = parse_expr();
            if (!value) return value.status();
            call.kwargs.emplace_back(std::move(key), std::move(*value));
            continue;
        }
        if (!call.kwargs.empty()) return error("positional argument after keyword argument");
        auto arg = parse_expr();
        if (!arg) return arg.status();
        call.children.push_back(std::move(*arg));
    }
    return expect_op(")");
}

Expected<ExprPtr> Parser::parse_filter(ExprPtr node) {
    auto filter = make(ExprKind::Filter, peek().line);
    auto name = expect_name();
    if (!name) return name.status();
    filter->name = *name;
    while (skip_op(".")) {
        auto part = expect_name();
        if (!part) return part.status();
        filter->name += "." + *part;
    }
    filter->children.push_back(std::move(node));
    if (is_op("(")) TS_RETURN_IF_ERROR(parse_call_args(*filter));
    return filter;
}

Expected<ExprPtr> Parser::parse_filters(ExprPtr node) {
    ChainGuard chain(depth_);
    while (true) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        if (skip_op("|")) {
            auto f = parse_filter(std::move(node));
            if (!f) return f;
            node = std::move(*f);
        } else if (is_name("is")) {
            const int line = next().line;
            auto test = make(ExprKind::Test, line);
            test->negated = skip_name("not");
            auto name = expect_name();
            if (!name) return name.status();
            test->name = *name;
            test->children.push_back(std::move(node));
            const Token& t = peek();
            const bool bare_arg = (t.type == TokenType::Name && t.text != "else" && t.text != "or" &&
                                   t.text != "and" && t.text != "if") ||
                                  t.type == TokenType::String || t.type == TokenType::Integer ||
                                  t.type == TokenType::Float || is_op("[") || is_op("{");
            if (is_op("(")) {
                TS_RETURN_IF_ERROR(parse_call_args(*test));
            } else if (bare_arg) {
                auto arg = parse_primary();
                if (!arg) return arg;
                auto post = parse_postfix(std::move(*arg));
                if (!post) return post;
                test->children.push_back(std::move(*post));
            }
            node = std::move(test);
        } else {
            return node;
        }
    }
}

}  // namespace tessera::jinja
