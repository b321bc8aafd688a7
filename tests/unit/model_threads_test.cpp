// The forward pass gives the same bits whatever the pool size: the server's
// determinism (the same greedy text at any load) rests on it. A prompt long
// enough that the per-token work between the matmuls (norms, RoPE, cache
// writes, SwiGLU, residual adds) is split over the threads, then decode
// steps, which run it on one thread.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "model/model.h"

namespace tessera {
namespace {

// Logits of every prompt token, then of three decode steps, in one vector.
std::vector<float> run(Model& model, int n_threads) {
    ThreadPool pool(n_threads);
    KvCache cache = model.make_kv_cache(128);
    SoloSequence seq(cache);
    std::vector<int32_t> prompt(45);  // 45: odd, and ranges of 15 / 22 / 23 tokens per thread
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(100 + 37 * i);
    std::vector<float> all, logits;
    EXPECT_TRUE(model.forward(cache, seq, prompt, true, logits, pool).ok());
    all = logits;
    for (int32_t token : {7, 300, 4000}) {
        const int32_t one[] = {token};
        EXPECT_TRUE(model.forward(cache, seq, one, false, logits, pool).ok());
        all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
}

TEST(ModelThreads, LogitsAreBitIdenticalAtEveryPoolSize) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error();
    const std::vector<float> one = run(**model, 1);
    ASSERT_EQ(one.size(), 48 * static_cast<size_t>((*model)->config().n_vocab));
    for (int n_threads : {2, 3}) {
        const std::vector<float> many = run(**model, n_threads);
        ASSERT_EQ(many.size(), one.size());
        EXPECT_EQ(std::memcmp(many.data(), one.data(), one.size() * sizeof(float)), 0) << n_threads << " threads";
    }
}

}  // namespace
}  // namespace tessera
