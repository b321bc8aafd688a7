// `tessera logits`: run a token sequence through the model and print the
// logits of every position, one line each. Used by the architecture tests to
// compare the forward pass with an independent reference, so its KV cache is
// F32 unless --kv-type says otherwise.
#include <cstdio>
#include <sstream>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "model/model.h"

namespace tessera {

int cmd_logits(int argc, char** argv) {
    CLI::App app{"Print the logits of a token sequence", "logits"};
    std::string model_path, token_text;
    int threads = default_threads();
    app.add_option("-m,--model", model_path, "GGUF model file")->required();
    app.add_option("--tokens", token_text, "token ids separated by spaces or commas")->required();
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    KvTypes kv_types{GgmlType::F32, GgmlType::F32};
    add_kv_type_flags(app, kv_types);
    if (auto code = parse_args(app, argc, argv)) return *code;

    std::vector<int32_t> tokens;
    for (char& ch : token_text) if (ch == ',') ch = ' ';
    std::istringstream in(token_text);
    long long id;
    while (in >> id) tokens.push_back(static_cast<int32_t>(id));
    if (!in.eof() || tokens.empty()) {
        std::fprintf(stderr, "tessera logits: --tokens must be a list of integers\n");
        return 2;
    }
    auto model = Model::load(model_path);
    if (!model) {
        std::fprintf(stderr, "tessera logits: %s\n", model.error().c_str());
        return 1;
    }
    if (Status st = check_kv_types(kv_types, (*model)->config().head_dim); !st.ok()) {
        std::fprintf(stderr, "tessera logits: %s\n", st.message().c_str());
        return 1;
    }
    KvCache cache = (*model)->make_kv_cache(static_cast<int64_t>(tokens.size()), kv_types);
    SoloSequence seq(cache);
    ThreadPool pool(threads);
    std::vector<float> logits;
    Status st = (*model)->forward(cache, seq, tokens, true, logits, pool);
    if (!st.ok()) {
        std::fprintf(stderr, "tessera logits: %s\n", st.message().c_str());
        return 1;
    }
    const size_t n_vocab = static_cast<size_t>((*model)->config().n_vocab);
    for (size_t t = 0; t < tokens.size(); ++t) {
        for (size_t v = 0; v < n_vocab; ++v) std::printf(v ? " %.6g" : "%.6g", logits[t * n_vocab + v]);
        std::printf("\n");
    }
    return 0;
}

}  // namespace tessera
