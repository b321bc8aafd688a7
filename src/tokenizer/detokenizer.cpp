// IncrementalDetokenizer (see detokenizer.h): appends each token's bytes to a
// small pending buffer and releases the longest prefix that is complete UTF-8.
#include "tokenizer/detokenizer.h"

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace tessera {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, const DetokenizerOptions& options)
    : tokenizer_(&tokenizer),
      render_special_(options.render_special),
      strip_next_space_(options.sequence_start && tokenizer.add_space_prefix()) {}

std::string IncrementalDetokenizer::push(int32_t id) {
    std::string_view piece = tokenizer_->token_to_piece(id, {.render_special = render_special_});
    if (strip_next_space_ && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
    strip_next_space_ = false;  // only the very first token, as in decode()
    pending_.append(piece);

    std::string out;
    size_t pos = 0;
    while (pos < pending_.size()) {
        uint32_t cp = 0;
        size_t len = 0;
        if (utf8_decode(pending_, pos, &cp, &len)) {
            out.append(pending_, pos, len);
            pos += len;
        } else if (utf8_is_incomplete_prefix(std::string_view(pending_).substr(pos))) {
            break;  // wait for the rest of this character
        } else {
            out.append(kReplacementChar);
            pos += 1;
        }
    }
    pending_.erase(0, pos);
    return out;
}

std::string IncrementalDetokenizer::flush() {
    std::string out;
    for (size_t i = 0; i < pending_.size(); ++i) out.append(kReplacementChar);
    pending_.clear();
    return out;
}

}  // namespace tessera
