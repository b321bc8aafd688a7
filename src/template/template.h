// Public entry point of the sandboxed Jinja engine: parse a template once,
// render it many times with JSON variables. Errors (syntax, runtime, limits,
// raise_exception) come back as values with the template line in the message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "template/template_limits.h"

namespace tessera {

namespace jinja {
struct ParsedTemplate;
}

struct RenderOptions {
    TemplateLimits limits;
    // What strftime_now() sees, as seconds since the epoch (UTC); unset means the clock.
    std::optional<int64_t> now_epoch_seconds;
};

class Template {
public:
    // jinja2 with trim_blocks and lstrip_blocks, as Hugging Face renders chat templates.
    static Expected<Template> parse(const std::string& source, const TemplateLimits& limits = {});

    // `variables` must be a JSON object; its members become template variables.
    Expected<std::string> render(const nlohmann::ordered_json& variables, const RenderOptions& options = {}) const;

    Template(Template&&) noexcept;
    Template& operator=(Template&&) noexcept;
    ~Template();

private:
    explicit Template(std::unique_ptr<jinja::ParsedTemplate> parsed);
    std::unique_ptr<jinja::ParsedTemplate> parsed_;
};

}  // namespace tessera
