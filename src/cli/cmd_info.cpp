// `tessera info`: print a GGUF file's metadata and tensor table, then the
// model parameters tessera reads from it (or why it cannot run it).
#include <cstdio>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace tessera {

int cmd_info(int argc, char** argv) {
    CLI::App app{"Print a model's metadata and tensors", "info"};
    std::string model_path;
    app.add_option("-m,--model", model_path, "GGUF file")->required();
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto file = GgufFile::open(model_path);
    if (!file) {
        std::fprintf(stderr, "tessera info: %s\n", file.error().c_str());
        return 1;
    }
    std::printf("GGUF version %u, alignment %llu, %zu metadata keys, %zu tensors\n", file->version(),
                static_cast<unsigned long long>(file->alignment()), file->metadata().size(), file->tensors().size());
    std::printf("\nmetadata:\n");
    for (const auto& [key, value] : file->metadata()) {
        std::printf("  %-45s %s\n", key.c_str(), value.to_display_string().c_str());
    }
    std::printf("\ntensors:\n");
    size_t total = 0;
    for (const auto& t : file->tensors()) {
        std::string shape;
        for (uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? " x " : "") + std::to_string(t.ne[d]);
        std::printf("  %-32s %-6s [%s] %zu bytes\n", t.name.c_str(), ggml_type_name(t.type), shape.c_str(), t.n_bytes);
        total += t.n_bytes;
    }
    std::printf("\ntotal tensor bytes: %zu\n", total);
    auto config = ModelConfig::from_gguf(*file);
    if (config) {
        std::printf("\nmodel:\n");
        const std::string text = config->describe();
        size_t begin = 0;
        for (size_t end = text.find('\n'); end != std::string::npos; begin = end + 1, end = text.find('\n', begin)) {
            std::printf("  %s\n", text.substr(begin, end - begin).c_str());
        }
    } else {
        std::printf("\nmodel: not supported: %s\n", config.error().c_str());
    }
    return 0;
}

}  // namespace tessera
