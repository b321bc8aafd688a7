// Streaming detokenization: turns generated token ids into text one at a time,
// holding back bytes until they form complete UTF-8 characters, so streamed
// chunks are always valid UTF-8 even when a character spans several tokens.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

class Tokenizer;

// How ids become text; call as decode(ids, {.render_special = true}).
struct DecodeOptions {
    bool render_special = false;  // control and unknown tokens as their text, else ""
};

struct DetokenizerOptions {
    bool render_special = false;  // as DecodeOptions
    // The first pushed token begins the text, so it loses its SentencePiece
    // leading space exactly as Tokenizer::decode does, and the chunks add up
    // to decode()'s result. Off: the tokens continue a prompt, and every
    // piece is emitted as is (llama.cpp's streaming).
    bool sequence_start = false;
};

class IncrementalDetokenizer {
public:
    explicit IncrementalDetokenizer(const Tokenizer& tokenizer, const DetokenizerOptions& options = {});

    // The text that became complete with this token (possibly empty).
    // Bytes that can never become valid UTF-8 are emitted as U+FFFD.
    std::string push(int32_t id);
    // Whatever is still held back (an unfinished character) as U+FFFD.
    std::string flush();

private:
    const Tokenizer* tokenizer_;
    bool render_special_;
    bool strip_next_space_;
    std::string pending_;  // bytes of an unfinished character (at most 3)
};

}  // namespace tessera
