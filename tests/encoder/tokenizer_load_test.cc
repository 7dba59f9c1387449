// LoadTokenizer: vocab.txt, tokenizer.json, tokenizer_config.json, errors,
// SaveTo round trips. No external files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "encoder/tokenizer/tokenizer.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"
#include "tests/encoder/tokenizer_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;

constexpr char kVocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nHello\n##s\n";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::vector<int32_t> Ids(const Tokenizer& tok, std::string_view text) {
  auto r = tok.Tokenize(text);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<int32_t>{};
}

TEST(LoadTokenizerTest, VocabTxt) {
  ScratchDir dir;
  dir.Write("vocab.txt", kVocab);
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->kind(), "wordpiece");
  EXPECT_EQ((*tok)->vocab_size(), 9);
  EXPECT_THAT(Ids(**tok, "Hello worlds"), ElementsAre(5, 6, 8));
  EXPECT_THAT((*tok)->Encode("hello").value(), ElementsAre(2, 5, 3));
}

TEST(LoadTokenizerTest, VocabTxtWithCrlfAndNoFinalNewline) {
  ScratchDir dir;
  dir.Write("vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nhello");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 6);
  EXPECT_EQ((*tok)->IdToToken(4), "[MASK]");
  EXPECT_THAT(Ids(**tok, "hello"), ElementsAre(5));
}

TEST(LoadTokenizerTest, MalformedVocabTxtIsRejectedClearly) {
  struct Case {
    std::string contents;
    std::string expected;
  };
  const Case cases[] = {
      {"", "is empty"},
      {"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nhello\n", "\"hello\" appears twice"},
      {"[PAD]\n[UNK]\n[SEP]\nhello\n", "lacks the special tokens [CLS], [MASK]"},
      {"[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n[MASK]\n", "line 3 is empty"},
      {"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nbad\rtoken\n", "line 6 contains a carriage return"},
      {"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nbad\xFFtoken\n", "UTF-8"},
  };
  for (const Case& c : cases) {
    ScratchDir dir;
    dir.Write("vocab.txt", c.contents);
    auto tok = LoadTokenizer(dir.path());
    ASSERT_FALSE(tok.ok()) << c.expected;
    EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(tok.status()), HasSubstr(c.expected));
    EXPECT_THAT(Message(tok.status()), HasSubstr("vocab.txt"));
  }
}

TEST(LoadTokenizerTest, TokenizerConfigDoLowerCase) {
  ScratchDir dir;
  dir.Write("vocab.txt", kVocab);
  dir.Write("tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 512})");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_THAT(Ids(**tok, "Hello hello"), ElementsAre(7, 5));
  dir.Write("tokenizer_config.json", R"({"do_lower_case": "no"})");
  auto bad = LoadTokenizer(dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()), HasSubstr("\"do_lower_case\" must be a boolean"));
  dir.Write("tokenizer_config.json", "{not json");
  EXPECT_THAT(Message(LoadTokenizer(dir.path()).status()), HasSubstr("not valid JSON"));
}

std::string TokenizerJson(const std::string& vocab, const std::string& normalizer = "null",
                          const std::string& type = "WordPiece") {
  return R"({"version": "1.0", "added_tokens": [], "normalizer": )" + normalizer +
         R"(, "model": {"type": ")" + type +
         R"(", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
             "max_input_chars_per_word": 100, "vocab": )" +
         vocab + "}}";
}

constexpr char kJsonVocab[] =
    R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "Hello": 6})";

TEST(LoadTokenizerTest, TokenizerJsonWordPiece) {
  ScratchDir dir;
  dir.Write("tokenizer.json", TokenizerJson(kJsonVocab));
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->kind(), "wordpiece");
  EXPECT_EQ((*tok)->vocab_size(), 7);
  EXPECT_EQ((*tok)->IdToToken(6), "Hello");
  EXPECT_THAT(Ids(**tok, "HELLO"), ElementsAre(5));
}

TEST(LoadTokenizerTest, TokenizerJsonNormalizerAndConfigOverride) {
  ScratchDir dir;
  const std::string cased_normalizer =
      R"({"type": "Sequence", "normalizers": [{"type": "BertNormalizer", "clean_text": true,
          "handle_chinese_chars": true, "strip_accents": null, "lowercase": false}]})";
  dir.Write("tokenizer.json", TokenizerJson(kJsonVocab, cased_normalizer));
  auto cased = LoadTokenizer(dir.path());
  ASSERT_TRUE(cased.ok()) << cased.status();
  EXPECT_THAT(Ids(**cased, "Hello hello"), ElementsAre(6, 5));
  // tokenizer_config.json wins, as in transformers' BertTokenizerFast.
  dir.Write("tokenizer_config.json", R"({"do_lower_case": true})");
  auto lowered = LoadTokenizer(dir.path());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(Ids(**lowered, "Hello hello"), ElementsAre(5, 5));
}

TEST(LoadTokenizerTest, MalformedTokenizerJsonIsRejectedClearly) {
  struct Case {
    std::string contents;
    std::string expected;
  };
  const Case cases[] = {
      {"[1, 2]", "not a JSON object"},
      {"{\"model\": 3}", "no \"model\" object"},
      {TokenizerJson(kJsonVocab, "null", "BPE"), "expected \"WordPiece\""},
      {TokenizerJson(R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 7})"),
       "outside 0..4"},
      {TokenizerJson(R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 3})"),
       "id 3 is used by two tokens"},
      {TokenizerJson(R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": "4"})"),
       "not an integer"},
      {TokenizerJson(R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3})"),
       "lacks the special tokens [MASK]"},
      {TokenizerJson("{}"), "model.vocab is empty"},
  };
  for (const Case& c : cases) {
    ScratchDir dir;
    dir.Write("tokenizer.json", c.contents);
    auto tok = LoadTokenizer(dir.path());
    ASSERT_FALSE(tok.ok()) << c.expected;
    EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(tok.status()), HasSubstr(c.expected));
    EXPECT_THAT(Message(tok.status()), HasSubstr("tokenizer.json"));
  }
}

TEST(LoadTokenizerTest, VocabTxtTakesPrecedenceOverTokenizerJson) {
  ScratchDir dir;
  dir.Write("vocab.txt", kVocab);
  dir.Write("tokenizer.json", TokenizerJson(kJsonVocab));
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 9);
}

TEST(LoadTokenizerTest, NothingToLoadSaysWhatItLookedFor) {
  ScratchDir dir;
  dir.Write("README", "no tokenizer here");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(tok.status()), HasSubstr("vocab.txt"));
  EXPECT_THAT(Message(tok.status()), HasSubstr("tokenizer.json"));
  EXPECT_THAT(Message(tok.status()), HasSubstr("*.model"));
  auto missing = LoadTokenizer(dir.File("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(LoadTokenizerTest, WordPieceSaveToRoundTrips) {
  ScratchDir src;
  src.Write("tokenizer.json", TokenizerJson(kJsonVocab, R"({"type": "BertNormalizer",
      "lowercase": false})"));
  auto tok = LoadTokenizer(src.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  ScratchDir dst;
  ASSERT_TRUE((*tok)->SaveTo(dst.path()).ok());
  auto back = LoadTokenizer(dst.path());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->vocab_size(), (*tok)->vocab_size());
  for (int32_t id = 0; id < (*tok)->vocab_size(); ++id) {
    EXPECT_EQ((*back)->IdToToken(id), (*tok)->IdToToken(id));
  }
  // The cased setting survives through tokenizer_config.json.
  EXPECT_THAT(Ids(**back, "Hello hello"), ElementsAre(6, 5));
}

}  // namespace
}  // namespace neodb::encoder
