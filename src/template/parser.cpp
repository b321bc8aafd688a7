// Recursive-descent parser for the jinja2 subset (see parser.h): the template
// body and statements. Expressions are in parse_expr.cpp.
#include "template/parser.h"

#include "template/parser_impl.h"

namespace tessera::jinja {

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
    } else if (name == "break" || name == "continue") {
        TS_RETURN_IF_ERROR(parse_loop_control(node, name == "break"));
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
    ++loop_depth_;  // the body only: break in a for's else leaves an outer loop
    const Status body = parse_until({"else", "endfor"}, node->body, which);
    --loop_depth_;
    TS_RETURN_IF_ERROR(body);
    TS_RETURN_IF_ERROR(expect(TokenType::BlockEnd, "'%}'"));
    if (which == "else") return parse_end("endfor", node->else_body);
    return ok_status();
}

// {% break %} / {% continue %} (jinja2's loopcontrols extension, which
// transformers enables); like jinja2, only inside a for loop's body.
Status Parser::parse_loop_control(NodePtr& node, bool is_break) {
    const char* tag = is_break ? "break" : "continue";
    if (loop_depth_ == 0) return error(std::string("'") + tag + "' outside a for loop");
    node = std::make_unique<Node>();
    node->kind = is_break ? NodeKind::Break : NodeKind::Continue;
    node->line = peek().line;
    return expect(TokenType::BlockEnd, "'%}'");
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
    const int outer_loops = loop_depth_;
    loop_depth_ = 0;  // a macro or call body is a function of its own
    const Status body = parse_end(is_call ? "endcall" : "endmacro", node->body);
    loop_depth_ = outer_loops;
    return body;
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

Expected<Body> parse_template(const std::vector<Token>& tokens, int max_nesting) {
    if (tokens.empty()) return Body{};
    Parser parser(tokens, max_nesting);
    return parser.parse_all();
}

}  // namespace tessera::jinja
