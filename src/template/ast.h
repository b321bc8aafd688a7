// Syntax tree of a parsed template: expressions and statements. The parser
// builds it once; the evaluator walks it for every render. Every node keeps
// its source line so runtime errors can point at it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "template/value.h"

namespace tessera::jinja {

enum class ExprKind {
    Literal,    // literal
    Name,       // name
    List,       // children: items
    Tuple,      // children: items
    DictLit,    // children: key, value, key, value, ...
    Attr,       // children[0].name
    Item,       // children[0][children[1]]
    Slice,      // children[0][a:b:c]; children[1..3] may be null
    Call,       // children[0](children[1..], kwargs)
    Filter,     // children[0] | name(args, kwargs)
    Test,       // children[0] is [not] name(args)
    Not,        // not children[0]
    Negate,     // -children[0]
    Plus,       // +children[0]
    Binary,     // children[0] op children[1]
    Compare,    // children[0] ops[0] children[1] ops[1] children[2] ...
    And,
    Or,
    Cond,       // children[0] if children[1] else children[2] (may be null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    ExprKind kind = ExprKind::Literal;
    int line = 1;
    Value literal;
    std::string name;                 // Name, Attr, Filter, Test; op for Binary
    std::vector<std::string> ops;     // Compare
    std::vector<ExprPtr> children;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;  // Call, Filter, Test
    bool negated = false;             // Test
};

enum class NodeKind { Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, Break, Continue };

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // may be null
};

struct Node {
    NodeKind kind = NodeKind::Text;
    int line = 1;
    std::string text;                  // Text; Macro name
    ExprPtr expr;                      // Output, For iterable, Set value, CallBlock call, FilterBlock filter
    ExprPtr filter;                    // For `if` filter; SetBlock filter chain (input child null)
    std::vector<std::string> targets;  // For / Set names; Set with attribute: {ns, attr}
    bool attr_target = false;          // Set ns.attr
    std::vector<std::pair<ExprPtr, Body>> branches;  // If: (cond, body) ...
    Body body;                         // For, SetBlock, Macro, CallBlock, FilterBlock
    Body else_body;                    // If, For
    std::vector<MacroParam> params;    // Macro, CallBlock caller params
};

}  // namespace tessera::jinja
