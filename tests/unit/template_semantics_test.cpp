// Engine semantics against jinja2: every case in semantics.json (whitespace
// control, scoping, loops, filters, tests, undefined, errors) was rendered by
// Python jinja2 in tools/gen_template_golden.py; tessera must match it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "template/template.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

Json load_semantics() {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/golden/templates/semantics.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return Json::parse(ss.str(), nullptr, false);
}

Expected<std::string> render_case(const Json& c, int64_t now) {
    auto tmpl = Template::parse(c["template"].get<std::string>());
    if (!tmpl) return tmpl.status();
    RenderOptions options;
    options.now_epoch_seconds = now;
    return tmpl->render(c["vars"], options);
}

TEST(TemplateSemantics, MatchesJinja2) {
    const Json golden = load_semantics();
    ASSERT_FALSE(golden.is_discarded());
    ASSERT_GE(golden["cases"].size(), 90u);
    const int64_t now = golden["now"].get<int64_t>();
    int passed = 0, total = 0;
    for (const Json& c : golden["cases"]) {
        ++total;
        const std::string name = c["name"].get<std::string>();
        auto got = render_case(c, now);
        if (c.contains("error")) {
            EXPECT_FALSE(got.ok()) << name << ": jinja2 raised " << c["error"] << " but tessera rendered '"
                                   << (got.ok() ? *got : "") << "'";
            if (!got.ok()) ++passed;
            continue;
        }
        EXPECT_TRUE(got.ok()) << name << ": " << got.error();
        if (!got.ok()) continue;
        EXPECT_EQ(*got, c["output"].get<std::string>()) << name;
        if (*got == c["output"].get<std::string>()) ++passed;
    }
    std::printf("semantics: %d/%d cases match jinja2\n", passed, total);
}

}  // namespace
}  // namespace tessera
