// Recursive-descent parser for the jinja2 subset (see parser.h). Expression
// precedence follows jinja2's parser: condexpr < or < and < not < compare <
// +,- < ~ < *,/,//,% < ** < unary < filters/tests < postfix.
#include "template/parser.h"

#include <cstdlib>

namespace tessera::jinja {
namespace {

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
    Status parse_params(std::vector<MacroParam>& params);
    Status parse_end(const char* end_name, Body& body);

    Expected<ExprPtr> parse_expr(bool with_cond = true);
    Expected<ExprPtr> parse_or();
    Expected<ExprPtr> parse_and();
    Expected<ExprPtr> parse_not();
    Expected<ExprPtr> parse_compare();
    Expected<ExprPtr> parse_math1();
    Expected<ExprPtr> parse_concat();
    Expected<ExprPtr> parse_math2();
    Expected<ExprPtr> parse_pow();
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
};

Status Parser::parse_until(const std::vector<std::string>& ends, Body& out, std::string& which) {
    while (true) {
        const Token& t = peek();
        if (t.type == TokenType::End) {
            if (ends.empty()) return ok_status();
            return error("unexpected end of template, expected '" + ends.back() + "'");
        }
        if (t.type == TokenType::Text) {
            auto node = std::make_unique<Node>();
            node->kind = NodeKind::Text;
            node->line = t.line;
            node->text = next().text;
            out.push_back(std::move(node));
        } else if (t.type == TokenType::VarBegin) {
            auto node = std::make_unique<Node>();
            node->kind = NodeKind::Output;
            node->line = next().line;
            auto e = parse_expr();
            if (!e) return e.status();
            node->expr = std::move(*e);
            TS_RETURN_IF_ERROR(expect(TokenType::VarEnd, "'}}'"));
            out.push_back(std::move(node));
        } else if (t.type == TokenType::BlockBegin) {
            const Token& tag = peek(1);
            for (const std::string& end : ends) {
                if (tag.type == TokenType::Name && tag.text == end) {
                    next();
                    which = next().text;
                    return ok_status();
                }
            }
            next();
            TS_RETURN_IF_ERROR(parse_statement(out));
        } else {
            return error("unexpected " + describe(t));
        }
    }
}

Status Parser::parse_statement(Body& out) {
    DepthGuard guard(depth_);
    TS_RETURN_IF_ERROR(check_depth());
    auto tag = expect_name();
    if (!tag) return tag.status();
    NodePtr node;
    const std::string& name = *tag;
    if (name == "if") {
        TS_RETURN_IF_ERROR(parse_if(node));
    } else if (name == "for") {
        TS_RETURN_IF_ERROR(parse_for(node));
    } else if (name == "set") {
        TS_RETURN_IF_ERROR(parse_set(node));
    } else if (name == "macro" || name == "call") {
        TS_RETURN_IF_ERROR(parse_macro(node, name == "call"));
    } else if (name == "filter") {
        TS_RETURN_IF_ERROR(parse_filter_block(node));
    } else {
        return error("unknown or unsupported tag '" + name + "'");
    }
    out.push_back(std::move(node));
    return ok_status();
}

// Consumes the rest of an end tag ("{% endX" already read) and checks its name.
Status Parser::parse_end(const char* end_name, Body& body) {
    std::string which;
    TS_RETURN_IF_ERROR(parse_until({end_name}, body, which));
    return expect(TokenType::BlockEnd, "'%}'");
}

Status Parser::parse_if(NodePtr& node) {
    node = std::make_unique<Node>();
    node->kind = NodeKind::If;
    node->line = peek().line;
    while (true) {
        auto cond = parse_expr();
        if (!cond) return cond.status();
        TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
        Body body;
        std::string which;
        TS_RETURN_IF_ERROR(parse_until({"elif", "else", "endif"}, body, which));
        node->branches.emplace_back(std::move(*cond), std::move(body));
        if (which == "elif") continue;
        TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
        if (which == "else") return parse_end("endif", node->else_body);
        return ok_status();
    }
}

Status Parser::parse_for(NodePtr& node) {
    node = std::make_unique<Node>();
    node->kind = NodeKind::For;
    node->line = peek().line;
    do {
        auto name = expect_name();
        if (!name) return name.status();
        node->targets.push_back(*name);
    } while (skip_op(","));
    if (!skip_name("in")) return error("expected 'in' in for loop, got " + describe(peek()));
    auto iter = parse_expr(false);
    if (!iter) return iter.status();
    node->expr = std::move(*iter);
    if (skip_name("if")) {
        auto filter = parse_expr(false);
        if (!filter) return filter.status();
        node->filter = std::move(*filter);
    }
    if (is_name("recursive")) return error("recursive for loops are not supported");
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    std::string which;
    TS_RETURN_IF_ERROR(parse_until({"else", "endfor"}, node->body, which));
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    if (which == "else") return parse_end("endfor", node->else_body);
    return ok_status();
}

Status Parser::parse_set(NodePtr& node) {
    node = std::make_unique<Node>();
    node->line = peek().line;
    auto first = expect_name();
    if (!first) return first.status();
    node->targets.push_back(*first);
    if (skip_op(".")) {
        auto attr = expect_name();
        if (!attr) return attr.status();
        node->targets.push_back(*attr);
        node->attr_target = true;
    } else {
        while (skip_op(",")) {
            auto name = expect_name();
            if (!name) return name.status();
            node->targets.push_back(*name);
        }
    }
    if (skip_op("=")) {
        node->kind = NodeKind::Set;
        auto value = parse_expr();
        if (!value) return value.status();
        node->expr = std::move(*value);
        return expect(TokenType::BlockEnd, "'%}'");
    }
    if (node->targets.size() > 1 && !node->attr_target) return error("block set takes a single name");
    node->kind = NodeKind::SetBlock;
    if (is_op("|")) {
        auto chain = parse_filters(nullptr);
        if (!chain) return chain.status();
        node->filter = std::move(*chain);
    }
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    return parse_end("endset", node->body);
}

Status Parser::parse_params(std::vector<MacroParam>& params) {
    TS_RETURN_IF_ERROR(expect_op("("));
    while (!is_op(")")) {
        if (!params.empty()) TS_RETURN_IF_ERROR(expect_op(","));
        if (is_op(")")) break;
        auto name = expect_name();
        if (!name) return name.status();
        MacroParam p{*name, nullptr};
        if (skip_op("=")) {
            auto def = parse_expr();
            if (!def) return def.status();
            p.default_value = std::move(*def);
        }
        params.push_back(std::move(p));
    }
    return expect_op(")");
}

Status Parser::parse_macro(NodePtr& node, bool is_call) {
    node = std::make_unique<Node>();
    node->kind = is_call ? NodeKind::CallBlock : NodeKind::Macro;
    node->line = peek().line;
    if (is_call) {
        if (is_op("(")) TS_RETURN_IF_ERROR(parse_params(node->params));
        auto call = parse_expr();
        if (!call) return call.status();
        if ((*call)->kind != ExprKind::Call) return error("{% call %} needs a macro call");
        node->expr = std::move(*call);
    } else {
        auto name = expect_name();
        if (!name) return name.status();
        node->text = *name;
        TS_RETURN_IF_ERROR(parse_params(node->params));
    }
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    return parse_end(is_call ? "endcall" : "endmacro", node->body);
}

Status Parser::parse_filter_block(NodePtr& node) {
    node = std::make_unique<Node>();
    node->kind = NodeKind::FilterBlock;
    node->line = peek().line;
    auto first = parse_filter(nullptr);
    if (!first) return first.status();
    auto chain = parse_filters(std::move(*first));
    if (!chain) return chain.status();
    node->filter = std::move(*chain);
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    return parse_end("endfilter", node->body);
}

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

Expected<ExprPtr> Parser::parse_or() {
    auto left = parse_and();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_name("or")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = next().line;
        auto right = parse_and();
        if (!right) return right;
        auto node = make(ExprKind::Or, line);
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_and() {
    auto left = parse_not();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_name("and")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = next().line;
        auto right = parse_not();
        if (!right) return right;
        auto node = make(ExprKind::And, line);
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

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
    auto left = parse_concat();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_op("+") || is_op("-")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const Token& op = next();
        auto right = parse_concat();
        if (!right) return right;
        auto node = make(ExprKind::Binary, op.line);
        node->name = op.text;
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_concat() {
    auto left = parse_math2();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_op("~")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = next().line;
        auto right = parse_math2();
        if (!right) return right;
        auto node = make(ExprKind::Binary, line);
        node->name = "~";
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_math2() {
    auto left = parse_pow();
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const Token& op = next();
        auto right = parse_pow();
        if (!right) return right;
        auto node = make(ExprKind::Binary, op.line);
        node->name = op.text;
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
}

Expected<ExprPtr> Parser::parse_pow() {
    auto left = parse_unary(true);
    if (!left) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(depth_);
    while (is_op("**")) {
        chain.grow();
        TS_RETURN_IF_ERROR(check_depth());
        const int line = next().line;
        auto right = parse_unary(true);
        if (!right) return right;
        auto node = make(ExprKind::Binary, line);
        node->name = "**";
        node->children.push_back(std::move(expr));
        node->children.push_back(std::move(*right));
        expr = std::move(node);
    }
    return expr;
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

}  // namespace

Expected<Body> parse_template(const std::vector<Token>& tokens, int max_nesting) {
    if (tokens.empty()) return Body{};
    Parser parser(tokens, max_nesting);
    return parser.parse_all();
}

}  // namespace tessera::jinja
