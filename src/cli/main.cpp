// The `tessera` command: dispatches to subcommands.
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tessera <command> [options]\n");
        return 2;
    }
    std::fprintf(stderr, "tessera: unknown command '%s'\n", argv[1]);
    return 2;
}
