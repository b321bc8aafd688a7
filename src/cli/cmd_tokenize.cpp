// `tessera tokenize -m MODEL [--no-bos] [--parse-special]`: reads all of stdin,
// tokenizes it with the model's own tokenizer and prints the ids on one line.
#include "cli/commands.h"

#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/cli_util.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

int cmd_tokenize(int argc, char** argv) {
    CLI::App app{"Print the token ids of stdin", "tokenize"};
    std::string model_path;
    bool no_bos = false;
    bool parse_special = false;
    app.add_option("-m,--model", model_path, "GGUF file")->required();
    app.add_flag("--no-bos", no_bos, "do not add BOS/EOS even where the vocabulary asks for them");
    app.add_flag("--parse-special", parse_special,
                 "turn special-token text such as <|im_start|> into its token");
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto gguf = GgufFile::open(model_path);
    if (!gguf) {
        std::fprintf(stderr, "tessera tokenize: %s\n", gguf.error().c_str());
        return 1;
    }
    auto tokenizer = Tokenizer::from_gguf(*gguf);
    if (!tokenizer) {
        std::fprintf(stderr, "tessera tokenize: %s: %s\n", model_path.c_str(),
                     tokenizer.error().c_str());
        return 1;
    }
    const std::string text((std::istreambuf_iterator<char>(std::cin)),
                           std::istreambuf_iterator<char>());
    const auto ids = tokenizer->encode(text, {.add_special = !no_bos, .parse_special = parse_special});
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) line += ' ';
        line += std::to_string(ids[i]);
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    return 0;
}

}  // namespace tessera
