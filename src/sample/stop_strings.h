// Applies a request's stop strings to streamed text. Text that might be the
// start of a stop string is held back until it is known not to be, so a stop
// string never reaches the client even when it straddles token boundaries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

class StopStringMatcher {
public:
    // Empty strings are ignored (they would match before any text).
    explicit StopStringMatcher(std::vector<std::string> stops);

    struct Result {
        std::string emit;  // text that is safe to send now
        bool stopped;      // a stop string matched; emit is the text before it
    };

    // Feeds newly decoded text. Once stopped, further pushes emit nothing and
    // report stopped again. Matching is bytewise, so with valid UTF-8 stops a
    // match always lands on character boundaries.
    Result push(std::string_view new_text);

    // End of generation without a stop: returns the held-back text.
    std::string flush();

    bool stopped() const { return stopped_; }

private:
    size_t held_suffix_length() const;

    std::vector<std::string> stops_;
    std::string pending_;  // held-back text, always a proper prefix of some stop
    bool stopped_ = false;
};

}  // namespace tessera
