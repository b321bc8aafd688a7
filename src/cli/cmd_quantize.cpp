// `tessera quantize IN OUT TYPE`: writes a copy of a GGUF model with its
// weights converted to a quantization mix (quantize/quant_mix.h).
#include <cstdio>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/thread_pool.h"
#include "quantize/quant_mix.h"
#include "quantize/quantize_model.h"

namespace tessera {

int cmd_quantize(int argc, char** argv) {
    std::string types;
    for (const auto& n : quant_mix_names()) types += (types.empty() ? "" : ", ") + n;
    CLI::App app{"Write a copy of a model with its weights quantized.\nTYPE: " + types, "quantize"};
    std::string in_path, out_path, type;
    QuantizeOptions options;
    int threads = default_threads();
    app.add_option("input", in_path, "source GGUF file (F32/F16/BF16 weights)")->required();
    app.add_option("output", out_path, "GGUF file to write")->required();
    app.add_option("type", type, "quantization type")->required();
    app.add_flag("--allow-requantize", options.allow_requantize,
                 "convert weights that are already quantized (compounds both roundings)");
    app.add_option("--imatrix", options.imatrix_path,
                   "importance matrix (tessera imatrix, or llama-imatrix's GGUF file): weights each element's "
                   "rounding error by how large its column's inputs run");
    app.add_option("-t,--threads", threads, "threads")->check(CLI::Range(1, 1024));
    if (auto code = parse_args(app, argc, argv)) return *code;
    options.mix = type;
    if (in_path == out_path) {
        std::fprintf(stderr, "tessera quantize: the output must be a different file than the input\n");
        return 2;
    }

    Imatrix imatrix;
    if (!options.imatrix_path.empty()) {
        auto read = read_imatrix(options.imatrix_path);
        if (!read.ok()) {
            std::fprintf(stderr, "tessera quantize: %s\n", read.error().c_str());
            return 1;
        }
        imatrix = std::move(read.value());
        options.imatrix = &imatrix;
        std::fprintf(stderr, "importance matrix: %zu tensors, %u chunks of %u tokens\n", imatrix.tensors.size(),
                     imatrix.chunk_count, imatrix.chunk_size);
    }
    ThreadPool pool(threads);
    auto summary = quantize_model(in_path, out_path, options, pool, [](const QuantizeProgress& p) {
        std::fprintf(stderr, "[%zu/%zu] %-36s %s -> %s\n", p.index + 1, p.count, p.name->c_str(),
                     ggml_type_name(p.from), ggml_type_name(p.to));
    });
    if (!summary.ok()) {
        std::remove(out_path.c_str());  // never leave a partial file that looks like a model
        std::fprintf(stderr, "tessera quantize: %s\n", summary.error().c_str());
        return 1;
    }
    std::fprintf(stderr, "wrote %s: %zu tensors converted, %zu copied; weights %.1f MiB -> %.1f MiB\n",
                 out_path.c_str(), summary->tensors_converted, summary->tensors_copied,
                 static_cast<double>(summary->bytes_in) / (1 << 20), static_cast<double>(summary->bytes_out) / (1 << 20));
    if (options.imatrix != nullptr) {
        std::fprintf(stderr, "%zu of the converted tensors weighted by the importance matrix\n",
                     summary->tensors_weighted);
    }
    return 0;
}

}  // namespace tessera
