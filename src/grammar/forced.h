// Jump-forward decoding's raw material: where a grammar admits exactly one
// continuation (a fixed schema's keys and the punctuation between them), the
// bytes it forces next and a split of them into vocabulary tokens. The engine
// proposes those tokens as a draft that the model verifies in one forward
// pass (engine_spec.cpp), so output stays what plain masked decoding gives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/matcher.h"
#include "grammar/token_mask.h"

namespace tessera {

// The bytes the grammar forces after the matcher's input: each one the only
// byte allowed, stopping where the input so far is a complete match (the
// sequence may end there) or after max_bytes. The matcher is used as scratch
// and left as it was.
std::string forced_bytes(GrammarMatcher& matcher, size_t max_bytes);

// `bytes` split into vocabulary tokens, the longest token that starts the
// rest at each step (a model's own tokenization usually agrees; where it
// does not, verification rejects the rest of the draft). Stops early at a
// byte no token starts with, or after max_tokens tokens.
std::vector<int32_t> split_longest_first(const TokenVocabulary& vocab, std::string_view bytes, size_t max_tokens);

}  // namespace tessera
