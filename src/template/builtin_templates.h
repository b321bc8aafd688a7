// Chat templates tessera carries itself, chosen by name (`serve
// --chat-template NAME`) for a model whose own template is missing or wrong.
#pragma once

#include <optional>
#include <string>

namespace tessera {

// The Jinja source of built-in template `name`; nullopt for an unknown name.
std::optional<std::string> builtin_chat_template(const std::string& name);
// The known names, comma-separated, for help texts and errors.
std::string builtin_chat_template_names();

}  // namespace tessera
