// POST /v1/embeddings' body validation (server/embeddings_request.h): every
// input shape, the caps on inputs and tokens at their boundaries, the
// `dimensions` and `encoding_format` rules, and OpenAI's base64 layout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/embeddings_request.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/vocab.h"

namespace tessera {
namespace {

// 256 single-byte tokens and one merge ("ab" = 256).
Tokenizer byte_tokenizer() {
    ByteLevelMap map;
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) s.tokens.push_back(map.byte_text(static_cast<uint8_t>(b)));
    s.types.assign(256, static_cast<int32_t>(TokenType::Normal));
    s.tokens.push_back("ab");
    s.types.push_back(static_cast<int32_t>(TokenType::Normal));
    s.merges.push_back("a b");
    auto vocab = Vocab::create(std::move(s));
    EXPECT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    EXPECT_TRUE(tok.ok()) << tok.error();
    return std::move(*tok);
}

class EmbeddingsParse : public ::testing::Test {
protected:
    EmbeddingsParse() : tok_(byte_tokenizer()) {
        ctx_.tokenizer = &tok_;
        ctx_.max_context = 16;
        ctx_.n_embd = 64;
        ctx_.limits.max_embedding_inputs = 4;
        ctx_.limits.max_embedding_tokens = 20;
    }
    std::optional<ApiError> parse(const Json& body, EmbeddingsRequest& out) const {
        return parse_embeddings_request(body, ctx_, out);
    }
    void expect_error(const Json& body, const std::string& param) const {
        EmbeddingsRequest out;
        auto err = parse(body, out);
        ASSERT_TRUE(err.has_value()) << body.dump();
        EXPECT_EQ(err->http_status, 400) << body.dump();
        EXPECT_EQ(err->param, param) << body.dump() << " -> " << err->message;
    }

    Tokenizer tok_;
    EmbeddingsContext ctx_;
};

TEST_F(EmbeddingsParse, EveryInputShape) {
    EmbeddingsRequest one;
    ASSERT_FALSE(parse({{"input", "abc"}, {"model", "m"}}, one));
    EXPECT_EQ(one.inputs, (std::vector<std::vector<int32_t>>{{256, 'c'}}));
    EXPECT_EQ(one.model, "m");
    EXPECT_FALSE(one.base64);
    EXPECT_EQ(one.n_tokens, 2);

    EmbeddingsRequest texts;
    ASSERT_FALSE(parse({{"input", {"x", "ab"}}, {"encoding_format", "base64"}}, texts));
    EXPECT_EQ(texts.inputs, (std::vector<std::vector<int32_t>>{{'x'}, {256}}));
    EXPECT_TRUE(texts.base64);

    EmbeddingsRequest ids;
    ASSERT_FALSE(parse({{"input", {5, 6, 7}}}, ids));
    EXPECT_EQ(ids.inputs, (std::vector<std::vector<int32_t>>{{5, 6, 7}}));

    EmbeddingsRequest lists;
    ASSERT_FALSE(parse({{"input", {{1, 2}, {3}}}, {"dimensions", 64}}, lists));
    EXPECT_EQ(lists.inputs, (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
    EXPECT_EQ(lists.n_tokens, 3);
}

TEST_F(EmbeddingsParse, MalformedInputsAreRefusedNamingInput) {
    expect_error(Json::object(), "input");
    expect_error({{"input", ""}}, "input");
    expect_error({{"input", Json::array()}}, "input");
    expect_error({{"input", {Json::array()}}}, "input");
    expect_error({{"input", {"a", 1}}}, "input");
    expect_error({{"input", {1, "a"}}}, "input");
    expect_error({{"input", {{1}, "a"}}}, "input");
    expect_error({{"input", {1.5}}}, "input");
    expect_error({{"input", {257}}}, "input");
    expect_error({{"input", {-1}}}, "input");
    expect_error({{"input", true}}, "input");
    expect_error({{"input", {{"k", "v"}}}}, "input");
}

TEST_F(EmbeddingsParse, CapsAtTheirBoundaries) {
    EmbeddingsRequest out;
    EXPECT_FALSE(parse({{"input", {"a", "b", "c", "d"}}}, out));
    expect_error({{"input", {"a", "b", "c", "d", "e"}}}, "input");  // 5 inputs, cap 4
    EmbeddingsRequest full;
    EXPECT_FALSE(parse({{"input", std::vector<int32_t>(16, 1)}}, full));  // 16 tokens: the context
    expect_error({{"input", std::vector<int32_t>(17, 1)}}, "input");
    expect_error({{"input", std::string(17, 'z')}}, "input");
    EmbeddingsRequest twenty;
    EXPECT_FALSE(parse({{"input", {std::vector<int32_t>(10, 1), std::vector<int32_t>(10, 2)}}}, twenty));
    expect_error({{"input", {std::vector<int32_t>(10, 1), std::vector<int32_t>(11, 2)}}}, "input");
}

TEST_F(EmbeddingsParse, OtherFields) {
    expect_error({{"input", "a"}, {"dimensions", 32}}, "dimensions");
    expect_error({{"input", "a"}, {"dimensions", 0}}, "dimensions");
    expect_error({{"input", "a"}, {"dimensions", "64"}}, "dimensions");
    expect_error({{"input", "a"}, {"encoding_format", "int8"}}, "encoding_format");
    expect_error({{"input", "a"}, {"model", 3}}, "model");
    EmbeddingsRequest out;
    EXPECT_FALSE(parse({{"input", "a"}, {"user", "u"}, {"encoding_format", nullptr}}, out));
}

TEST(EmbeddingBase64, IsLittleEndianFloat32) {
    EXPECT_EQ(embedding_base64({}), "");
    EXPECT_EQ(embedding_base64({1.0f}), "AACAPw==");             // 00 00 80 3f
    EXPECT_EQ(embedding_base64({1.0f, -2.0f}), "AACAPwAAAMA=");  // + 00 00 00 c0
    EXPECT_EQ(embedding_base64({0.0f, 0.0f, 0.0f}), "AAAAAAAAAAAAAAAA");
}

}  // namespace
}  // namespace tessera
