// Entry points of the `tessera` subcommands. Each takes the arguments after
// the program name (argv[0] is the subcommand) and returns the exit code.
#pragma once

namespace tessera {

int cmd_run(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_logits(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_template(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_perplexity(int argc, char** argv);
int cmd_imatrix(int argc, char** argv);

}  // namespace tessera
