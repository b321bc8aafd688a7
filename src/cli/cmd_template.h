// `tessera template`: render a chat template for a conversation and print the
// exact prompt text, to inspect what the model will see.
#pragma once

namespace tessera {

// argv[0] is "template". Returns the process exit code.
int cmd_template(int argc, char** argv);

}  // namespace tessera
