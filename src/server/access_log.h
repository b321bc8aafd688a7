// One line per answered request (method, route, status, token counts, time to
// first token, total time), as text for people or JSON for log pipelines.
#pragma once

#include <string>

#include "server/http_message.h"

namespace tessera {

enum class AccessLogFormat { Off, Text, Json };

// The line for `record` (no trailing newline), stamped with the current UTC time.
std::string format_access_line(const AccessRecord& record, AccessLogFormat format);

}  // namespace tessera
