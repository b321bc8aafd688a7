// Template: glue between the public API and the lexer, parser and evaluator.
#include "template/template.h"

#include "template/evaluator.h"
#include "template/lexer.h"
#include "template/parser.h"
#include "template/value_format.h"

namespace tessera {

namespace jinja {
struct ParsedTemplate {
    Body body;
};
}  // namespace jinja

Template::Template(std::unique_ptr<jinja::ParsedTemplate> parsed) : parsed_(std::move(parsed)) {}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

Expected<Template> Template::parse(const std::string& source, const TemplateLimits& limits) {
    auto tokens = jinja::tokenize(source, jinja::LexOptions{});
    if (!tokens) return tokens.status();
    auto body = jinja::parse_template(*tokens, limits.max_nesting);
    if (!body) return body.status();
    auto parsed = std::make_unique<jinja::ParsedTemplate>();
    parsed->body = std::move(*body);
    return Template(std::move(parsed));
}

Expected<std::string> Template::render(const nlohmann::ordered_json& variables, const RenderOptions& options) const {
    if (!variables.is_object()) return Status::error("template variables must be a JSON object");
    auto values = jinja::from_json(variables);
    if (!values) return values.status();
    jinja::Renderer renderer(options.limits, options.now_epoch_seconds);
    return renderer.render(parsed_->body, values->as_dict());
}

}  // namespace tessera
