// `tessera tokenize`: prints the token ids of stdin for a model's vocabulary,
// for scripting and for comparing against other tokenizers.
#pragma once

namespace tessera {

// argv[0] is "tokenize". Usage: tokenize -m MODEL [--no-bos] [--parse-special]
// Returns the process exit code.
int cmd_tokenize(int argc, char** argv);

}  // namespace tessera
