// Readers for llama.cpp's vocabulary test cases, shared by the tokenizer
// suites: X.gguf.inp holds strings separated by "\n__ggml_vocab_test__\n",
// X.gguf.out one line of expected ids per string.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tessera::test {

inline std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct VocabCase {
    std::string text;
    std::vector<int32_t> ids;
};

// `base` is the .gguf path; its .inp and .out files sit beside it.
inline std::vector<VocabCase> read_vocab_cases(const std::string& base) {
    const std::string inp = read_all(base + ".inp");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<VocabCase> cases;
    for (size_t pos = 0, hit; (hit = inp.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
        cases.push_back({inp.substr(pos, hit - pos), {}});
    }
    std::istringstream out(read_all(base + ".out"));
    std::string line;
    for (VocabCase& c : cases) {
        std::getline(out, line);
        std::istringstream ls(line);
        for (int32_t id; ls >> id;) c.ids.push_back(id);
    }
    return cases;
}

}  // namespace tessera::test
