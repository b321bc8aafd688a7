// libFuzzer target: an arbitrary byte string as a `tessera serve --models-file`
// (and, split at its first newline, a URL query string read for `model`), the
// two model-naming inputs the server takes from outside.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/model_spec.h"
#include "server/query_string.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto specs = tessera::parse_models_file(text);
    if (specs) {
        for (const tessera::ModelSpec& s : *specs) (void)tessera::model_spec_json(s);
    }
    (void)tessera::query_param(text.substr(0, text.find('\n')), "model");
    return 0;
}
