// Unit tests for the tokenizer building blocks on small hand-made vocabularies:
// UTF-8 helpers, the byte-level map, pre-tokenizer splits, BPE and SentencePiece
// merging, special-token splitting and the incremental detokenizer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace tessera {
namespace {

std::vector<std::string> split_words(const PreTokenizer& p, std::string_view text) {
    std::vector<std::string> words;
    for (const Piece& piece : p.split(text)) words.emplace_back(text.substr(piece.first, piece.second));
    return words;
}

// A byte-level BPE vocabulary: the 256 byte characters, then the merge results.
VocabSpec tiny_bpe_spec(const std::vector<std::string>& merges) {
    ByteLevelMap map;
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) s.tokens.push_back(map.byte_text(static_cast<uint8_t>(b)));
    for (const std::string& m : merges) {
        const size_t sp = m.find(' ');
        s.tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
        s.merges.push_back(m);
    }
    return s;
}

TEST(Utf8, DecodeRejectsMalformedSequences) {
    uint32_t cp = 0;
    size_t len = 0;
    EXPECT_TRUE(utf8_decode("\xE2\x82\xAC", 0, &cp, &len));
    EXPECT_EQ(cp, 0x20ACu);
    EXPECT_EQ(len, 3u);
    for (std::string_view bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80", "\xFF"}) {
        EXPECT_FALSE(utf8_decode(bad, 0, &cp, &len)) << bad;
    }
    EXPECT_EQ(utf8_sanitize("a\xFF" "b\xE2\x82"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_TRUE(utf8_is_incomplete_prefix("\xF0\x9F\x98"));
    EXPECT_FALSE(utf8_is_incomplete_prefix("\xF0\x41"));
    EXPECT_FALSE(utf8_is_incomplete_prefix("\xE0\x80"));  // would be overlong
}

TEST(ByteLevel, MapsEveryByteAndBack) {
    ByteLevelMap map;
    EXPECT_EQ(map.byte_text(' '), "\xC4\xA0");   // U+0120
    EXPECT_EQ(map.byte_text('\n'), "\xC4\x8A");  // U+010A
    EXPECT_EQ(map.byte_text('A'), "A");
    std::string all;
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
    const std::string encoded = map.encode(all);
    EXPECT_TRUE(utf8_is_valid(encoded));
    EXPECT_EQ(map.decode(encoded), all);
}

TEST(PreTokenizer, Gpt2Splits) {
    auto p = PreTokenizer::create("gpt-2");
    ASSERT_TRUE(p.ok()) << p.error();
    EXPECT_EQ(split_words(*p, "Hello world's  end!!\n"),
              (std::vector<std::string>{"Hello", " world", "'s", " ", " end", "!!", "\n"}));
    // U+0085 counts as whitespace, as in Unicode's White_Space.
    EXPECT_EQ(split_words(*p, "a\xC2\x85" "b"), (std::vector<std::string>{"a", "\xC2\x85", "b"}));
}

TEST(PreTokenizer, DigitAndLlama3Rules) {
    auto smollm = PreTokenizer::create("smollm");
    ASSERT_TRUE(smollm.ok());
    EXPECT_EQ(split_words(*smollm, "x 123"), (std::vector<std::string>{"x", " ", "1", "2", "3"}));
    auto llama3 = PreTokenizer::create("llama-bpe");
    ASSERT_TRUE(llama3.ok());
    EXPECT_TRUE(llama3->family().ignore_merges);
    EXPECT_EQ(split_words(*llama3, "12345 I'M"), (std::vector<std::string>{"123", "45", " I", "'M"}));
    auto qwen2 = PreTokenizer::create("qwen2");
    ASSERT_TRUE(qwen2.ok());
    EXPECT_EQ(split_words(*qwen2, "42"), (std::vector<std::string>{"4", "2"}));
    EXPECT_FALSE(PreTokenizer::create("no-such-pre").ok());
}

TEST(Bpe, AppliesMergesByRank) {
    // "b c" ranks before "a b", so "abc" -> "a" + "bc", not "ab" + "c".
    auto vocab = Vocab::create(tiny_bpe_spec({"b c", "a b", "a bc"}));
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    const int32_t abc = tok->vocab().find("abc");
    EXPECT_EQ(tok->encode("abc", {}), std::vector<int32_t>({abc}));
    EXPECT_EQ(tok->encode("ab", {}), std::vector<int32_t>({tok->vocab().find("ab")}));
    EXPECT_EQ(tok->encode("ba", {}), std::vector<int32_t>({'b', 'a'}));  // id == byte
    EXPECT_EQ(tok->decode(tok->encode("ab abc\n", {})), "ab abc\n");
}

TEST(Spm, MergesByScoreWithByteFallback) {
    VocabSpec s;
    s.kind = VocabKind::Spm;
    s.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab", "<0x21>"};
    s.scores = {0, 0, 0, -1, -1, -1, -2, -3, 0};
    s.types = {2, 3, 3, 1, 1, 1, 1, 1, 6};
    s.unk = 0;
    s.bos = 1;
    s.eos = 2;
    s.add_bos = true;
    s.add_space_prefix = true;
    auto vocab = Vocab::create(s);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    // "▁a" (score -2) beats "ab" (score -3): "▁ab" -> "▁a" "b".
    EXPECT_EQ(tok->encode("ab", {}), std::vector<int32_t>({6, 5}));
    EXPECT_EQ(tok->encode("ab", {.add_special = true}), std::vector<int32_t>({1, 6, 5}));
    // "!" has a byte token; "?" has none, so it becomes <unk>.
    EXPECT_EQ(tok->encode("!?", {}), std::vector<int32_t>({3, 8, 0}));
    EXPECT_EQ(tok->decode(std::vector<int32_t>{6, 5, 8}), "ab!");
    EXPECT_EQ(tok->decode(std::vector<int32_t>{1, 6, 5}), " ab");  // BOS first: no strip
    EXPECT_EQ(tok->encode("", {.add_special = true}), std::vector<int32_t>({1}));
}

// The server refuses over-long prompts from their byte length alone, which is
// sound only if no token covers more input bytes than max_token_bytes().
TEST(MaxTokenBytes, BoundsEveryEncodingIncludingSpecialTokens) {
    VocabSpec s = tiny_bpe_spec({"a b", "ab ab"});
    s.tokens.push_back("<|a_long_control|>");  // 18 bytes: the longest text
    s.types.assign(s.tokens.size(), 1);
    s.types.back() = 3;
    auto vocab = Vocab::create(s);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    EXPECT_EQ(tok->max_token_bytes(), 18u);
    EXPECT_EQ(tok->min_tokens_for_bytes(0), 0u);
    EXPECT_EQ(tok->min_tokens_for_bytes(18), 1u);
    EXPECT_EQ(tok->min_tokens_for_bytes(19), 2u);
    std::string controls;
    for (int i = 0; i < 50; ++i) controls += "<|a_long_control|>";
    // Every control string is one token: the bound is exact there.
    EXPECT_EQ(tok->encode(controls, {.parse_special = true}).size(), tok->min_tokens_for_bytes(controls.size()));
    for (const std::string& text : {controls, std::string(300, 'a'), std::string(300, ' '),
                                    std::string(64, 'a') + "b\xff\xfe" + std::string(64, 'b')}) {
        for (bool special : {false, true}) {
            EXPECT_GE(tok->encode(text, {.parse_special = special}).size(), tok->min_tokens_for_bytes(text.size()));
        }
    }
}

// Byte-level text spells a space as the 2-byte "Ġ": the bound counts the
// bytes a token stands for, not its text, and is exact for runs of spaces.
TEST(MaxTokenBytes, ByteLevelCountsDecodedBytes) {
    auto vocab = Vocab::create(tiny_bpe_spec({"Ġ Ġ", "ĠĠ ĠĠ", "ĠĠĠĠ ĠĠĠĠ"}));
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    EXPECT_EQ(tok->max_token_bytes(), 8u);  // "ĠĠĠĠĠĠĠĠ": 16 bytes of text, 8 spaces
    const std::string spaces(320, ' ');
    EXPECT_EQ(tok->encode(spaces, {}).size(), 40u);
    EXPECT_EQ(tok->min_tokens_for_bytes(spaces.size()), 40u);
}

TEST(MaxTokenBytes, SpmSpacesAndByteFallbackStayWithinTheBound) {
    VocabSpec s;
    s.kind = VocabKind::Spm;
    // "▁▁▁▁" covers 4 spaces; "<0x21>" covers one byte as a fallback, but
    // its 6 bytes of text could in principle be merged from the input.
    s.tokens = {"<unk>", "\xE2\x96\x81", "\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81", "a", "<0x21>"};
    s.scores = {0, -1, -1, -1, 0};
    s.types = {2, 1, 1, 1, 6};
    s.unk = 0;
    s.add_space_prefix = true;
    auto vocab = Vocab::create(s);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    EXPECT_EQ(tok->max_token_bytes(), 6u);
    for (const std::string& text : {std::string(400, ' '), std::string(100, '!'), std::string("?a !"),
                                    std::string(" a a a a a a a a")}) {
        EXPECT_GE(tok->encode(text, {}).size(), tok->min_tokens_for_bytes(text.size()));
    }
}

TEST(MaxTokenBytes, NoBoundWhereEncodingCanDropBytes) {
    // No unk and no token for "z": encode() drops it, so a prompt of such
    // bytes encodes to nothing and no byte count implies a token count.
    VocabSpec bpe = tiny_bpe_spec({"a b"});
    bpe.tokens['z'] = "<spare>";
    auto vocab = Vocab::create(bpe);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    EXPECT_TRUE(tok->encode("zzzz", {}).empty());
    EXPECT_EQ(tok->max_token_bytes(), 0u);
    EXPECT_EQ(tok->min_tokens_for_bytes(1000), 0u);

    VocabSpec spm;
    spm.kind = VocabKind::Spm;
    spm.tokens = {"\xE2\x96\x81", "a"};  // no <unk>, no byte tokens
    auto spm_vocab = Vocab::create(spm);
    ASSERT_TRUE(spm_vocab.ok()) << spm_vocab.error();
    auto spm_tok = Tokenizer::from_vocab(std::move(*spm_vocab));
    ASSERT_TRUE(spm_tok.ok()) << spm_tok.error();
    EXPECT_EQ(spm_tok->max_token_bytes(), 0u);
}

TEST(SpecialSplit, UserDefinedAlwaysControlOnRequest) {
    VocabSpec s = tiny_bpe_spec({"a b"});
    s.tokens.push_back("<ctl>");
    s.tokens.push_back("<user>");
    s.tokens.push_back("<user>x");
    s.types.assign(s.tokens.size(), 1);
    const int32_t n = static_cast<int32_t>(s.tokens.size());
    s.types[static_cast<size_t>(n - 3)] = 3;
    s.types[static_cast<size_t>(n - 2)] = 4;
    s.types[static_cast<size_t>(n - 1)] = 4;
    auto vocab = Vocab::create(s);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    // The longest special string wins: "<user>x" before "<user>".
    EXPECT_EQ(tok->encode("<user>x<user>", {}), std::vector<int32_t>({n - 1, n - 2}));
    const auto plain = tok->encode("<ctl>", {});
    EXPECT_EQ(plain.size(), 5u);
    EXPECT_EQ(tok->encode("ab<ctl>ab", {.parse_special = true}),
              std::vector<int32_t>({tok->vocab().find("ab"), n - 3, tok->vocab().find("ab")}));
    EXPECT_EQ(tok->token_to_piece(n - 2), "<user>");
    EXPECT_EQ(tok->token_to_piece(n - 3), "");
    EXPECT_EQ(tok->token_to_piece(n - 3, {.render_special = true}), "<ctl>");
}

TEST(Detokenizer, HoldsBackPartialCharacters) {
    auto vocab = Vocab::create(tiny_bpe_spec({"a b"}));
    ASSERT_TRUE(vocab.ok());
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok());
    const auto ids = tok->encode("\xF0\x9F\x98\x80!", {});  // 😀 is four byte tokens
    ASSERT_EQ(ids.size(), 5u);
    IncrementalDetokenizer detok(*tok);
    EXPECT_EQ(detok.push(ids[0]), "");
    EXPECT_EQ(detok.push(ids[1]), "");
    EXPECT_EQ(detok.push(ids[2]), "");
    EXPECT_EQ(detok.push(ids[3]), "\xF0\x9F\x98\x80");
    EXPECT_EQ(detok.push(ids[4]), "!");
    // A lone continuation byte can never complete: it is replaced at once.
    EXPECT_EQ(detok.push(tok->vocab().find(ByteLevelMap().byte_text(0x80))), "\xEF\xBF\xBD");
    EXPECT_EQ(detok.push(ids[0]), "");
    EXPECT_EQ(detok.flush(), "\xEF\xBF\xBD");
    EXPECT_EQ(detok.push(-1), "");
    EXPECT_EQ(detok.push(1 << 30), "");
}

// gpt-oss's harmony tokens, as llama.cpp loads them: the message frame is
// rendered in generated text, <|return|> and <|call|> end generation, and
// <|end|> ends one only where the vocabulary is not a harmony one.
Tokenizer specials_tokenizer(const std::vector<std::string>& specials) {
    VocabSpec s = tiny_bpe_spec({"a b"});
    s.types.assign(s.tokens.size(), static_cast<int32_t>(TokenType::Normal));
    for (const std::string& t : specials) {
        s.tokens.push_back(t);
        s.types.push_back(static_cast<int32_t>(TokenType::Control));
    }
    auto vocab = Vocab::create(s);
    EXPECT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    EXPECT_TRUE(tok.ok()) << tok.error();
    return std::move(*tok);
}

TEST(Harmony, MessageFrameIsRenderedAndOnlyReturnOrCallEndGeneration) {
    const Tokenizer t = specials_tokenizer(
        {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<|constrain|>", "<|x|>"});
    auto id = [&](const char* text) { return t.encode(text, {.parse_special = true}).at(0); };
    for (const char* frame : {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|constrain|>"}) {
        EXPECT_EQ(t.token_to_piece(id(frame)), frame);
        EXPECT_EQ(t.encode(frame, {}), std::vector<int32_t>{id(frame)}) << "user-defined: matched in plain text";
    }
    EXPECT_EQ(t.token_to_piece(id("<|x|>")), "");  // other control tokens stay unrendered
    EXPECT_FALSE(t.is_eog(id("<|end|>")));
    EXPECT_TRUE(t.is_eog(id("<|return|>")));
    EXPECT_TRUE(t.is_eog(id("<|call|>")));
    EXPECT_EQ(t.eot(), id("<|return|>"));

    const Tokenizer phi = specials_tokenizer({"<|end|>", "<|user|>"});  // Phi-3: <|end|> ends the turn
    EXPECT_TRUE(phi.is_eog(phi.encode("<|end|>", {.parse_special = true}).at(0)));
    EXPECT_EQ(phi.token_to_piece(phi.encode("<|end|>", {.parse_special = true}).at(0)), "");
}

}  // namespace
}  // namespace tessera
