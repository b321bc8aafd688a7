// The web chat page `tessera serve` answers at / (src/server/web/index.html,
// compiled into the binary by CMake: no files to install, no CDN). It talks
// to the server's own /v1/chat/completions from the browser.
#pragma once

#include <string_view>

namespace tessera {

std::string_view web_index_html();

}  // namespace tessera
