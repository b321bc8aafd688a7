// Splits template source into text and tag tokens the way jinja2's lexer does,
// including whitespace control (`-`, `+`), trim_blocks, lstrip_blocks, raw
// blocks, newline normalisation and dropping one trailing newline.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::jinja {

enum class TokenType {
    Text,         // literal output
    VarBegin,     // {{
    VarEnd,       // }}
    BlockBegin,   // {%
    BlockEnd,     // %}
    Name,
    String,       // text holds the unescaped value
    Integer,
    Float,
    Operator,     // text holds the operator
    End,
};

struct Token {
    TokenType type = TokenType::End;
    std::string text;
    int line = 1;
};

struct LexOptions {
    bool trim_blocks = true;
    bool lstrip_blocks = true;
};

Expected<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options);

}  // namespace tessera::jinja
