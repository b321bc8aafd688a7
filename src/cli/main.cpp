// The `tessera` command: dispatches to subcommands.
#include <cstdio>
#include <cstring>

#include "cli/commands.h"

namespace {

struct Command {
    const char* name;
    int (*fn)(int, char**);
    const char* help;
};

constexpr Command kCommands[] = {
    {"run", tessera::cmd_run, "generate text from a prompt"},
    {"chat", tessera::cmd_chat, "interactive multi-turn chat"},
    {"serve", tessera::cmd_serve, "OpenAI-compatible HTTP server"},
    {"template", tessera::cmd_template, "print a rendered chat prompt"},
    {"tokenize", tessera::cmd_tokenize, "print the token ids of stdin"},
    {"info", tessera::cmd_info, "print a model's metadata and tensors"},
    {"logits", tessera::cmd_logits, "print the logits of a token sequence (testing)"},
    {"bench", tessera::cmd_bench, "measure prompt, decode and batched-decode speed"},
    {"perplexity", tessera::cmd_perplexity, "perplexity / KL divergence of a model over a text"},
    {"imatrix", tessera::cmd_imatrix, "importance matrix of a model over a calibration text (quantize --imatrix)"},
    {"quantize", tessera::cmd_quantize, "write a copy of a model with quantized weights"},
};

void usage() {
    std::fprintf(stderr, "usage: tessera <command> [options]\n\ncommands:\n");
    for (const auto& c : kCommands) std::fprintf(stderr, "  %-10s %s\n", c.name, c.help);
    std::fprintf(stderr, "\n`tessera <command> --help` describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    for (const auto& c : kCommands) {
        if (std::strcmp(argv[1], c.name) == 0) return c.fn(argc - 1, argv + 1);
    }
    std::fprintf(stderr, "tessera: unknown command '%s' (try `tessera --help`)\n", argv[1]);
    return 2;
}
