// Builds the syntax tree from tokens with jinja2's grammar and operator
// precedence. Nesting depth is capped so hostile templates cannot exhaust the
// stack; every syntax error names its line.
#pragma once

#include <vector>

#include "core/status.h"
#include "template/ast.h"
#include "template/lexer.h"

namespace tessera::jinja {

Expected<Body> parse_template(const std::vector<Token>& tokens, int max_nesting);

}  // namespace tessera::jinja
