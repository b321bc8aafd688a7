// Renders every chat template in tests/golden/templates over the recorded
// conversations and requires byte-identical output to Python jinja2 (or an
// error where jinja2 raised). Goldens come from tools/gen_template_golden.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "template/chat_render.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

std::string golden_dir() { return std::string(TESSERA_SOURCE_DIR) + "/tests/golden/templates"; }

Json load_json(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return Json::parse(ss.str(), nullptr, false);
}

std::vector<std::string> chat_golden_files() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(golden_dir())) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("chat_", 0) == 0 && entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

TEST(TemplateGolden, AllChatTemplatesMatchJinja2) {
    const std::vector<std::string> files = chat_golden_files();
    ASSERT_GE(files.size(), 8u) << "missing golden files in " << golden_dir();
    int total = 0, passed = 0, expected_errors = 0;
    for (const std::string& path : files) {
        const Json golden = load_json(path);
        ASSERT_FALSE(golden.is_discarded()) << path;
        const std::string tmpl = golden["template"].get<std::string>();
        for (const Json& c : golden["cases"]) {
            ++total;
            ChatRenderInput in;
            in.messages = c["messages"];
            in.tools = c["tools"];
            in.add_generation_prompt = c["add_generation_prompt"].get<bool>();
            in.now_epoch_seconds = golden["now"].get<int64_t>();
            const ChatTemplate chat(tmpl, c["bos_token"].get<std::string>(), c["eos_token"].get<std::string>());
            auto got = chat.render(std::move(in));
            const std::string where = golden["template_name"].get<std::string>() + " / " + c["name"].get<std::string>();
            if (c.contains("error")) {
                ++expected_errors;
                EXPECT_FALSE(got.ok()) << where << ": jinja2 raised " << c["error"] << " but tessera rendered:\n"
                                       << (got.ok() ? *got : "");
                // raise_exception messages must come through to the caller.
                const std::string err = c["error"].get<std::string>();
                const std::string raised = "TemplateError: ";
                if (!got.ok() && err.rfind(raised, 0) == 0) {
                    EXPECT_NE(got.error().find(err.substr(raised.size())), std::string::npos) << where << ": " << got.error();
                }
                if (!got.ok()) ++passed;
                continue;
            }
            ASSERT_TRUE(c.contains("output")) << where;
            EXPECT_TRUE(got.ok()) << where << ": " << got.error();
            if (!got.ok()) continue;
            EXPECT_EQ(*got, c["output"].get<std::string>()) << where;
            if (*got == c["output"].get<std::string>()) ++passed;
        }
    }
    std::printf("chat templates: %zu files, %d/%d cases identical to jinja2 (%d expected errors)\n", files.size(),
                passed, total, expected_errors);
    EXPECT_EQ(passed, total);
}

TEST(TemplateGolden, SmolLM2TemplateFileMatchesGolden) {
    std::ifstream in(golden_dir() + "/SmolLM2-135M-Instruct.jinja");
    std::stringstream ss;
    ss << in.rdbuf();
    const Json golden = load_json(golden_dir() + "/chat_SmolLM2-135M-Instruct.json");
    ASSERT_FALSE(golden.is_discarded());
    EXPECT_EQ(ss.str(), golden["template"].get<std::string>());
}

}  // namespace
}  // namespace tessera
