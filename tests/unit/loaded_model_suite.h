// A test suite whose tests share one model and tokenizer, loaded from
// TESSERA_MODEL once per suite (a load maps and checks the whole file);
// every test skips when the variable is not set.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace tessera::test {

class LoadedModelSuite : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const char* path = std::getenv("TESSERA_MODEL");
        if (!path) return;
        auto m = Model::load(path);
        ASSERT_TRUE(m.ok()) << m.error();
        model_ = std::move(*m).release();
        auto t = Tokenizer::from_gguf(model_->gguf());
        ASSERT_TRUE(t.ok()) << t.error();
        tokenizer_ = new Tokenizer(std::move(*t));
    }
    static void TearDownTestSuite() {
        delete tokenizer_;
        delete model_;
        tokenizer_ = nullptr;
        model_ = nullptr;
    }
    // A derived SetUp calls this first and returns if IsSkipped().
    void SetUp() override {
        if (!model_) GTEST_SKIP() << "TESSERA_MODEL not set";
    }

    static inline Model* model_ = nullptr;
    static inline Tokenizer* tokenizer_ = nullptr;
};

}  // namespace tessera::test
