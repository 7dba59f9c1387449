// WordPiece rules on a small hand-written vocabulary (no external files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "encoder/tokenizer/wordpiece_tokenizer.h"

namespace neodb::encoder {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

const std::vector<std::string>& HandVocab() {
  static const auto* vocab = new std::vector<std::string>{
      "[PAD]", "[UNK]", "[CLS]",    "[SEP]", "[MASK]",  // 0-4
      "un",    "una",   "##ffable", "##aff", "##able",  // 5-9
      "hello", "world", ",",        "!",     ".",       // 10-14
      "cafe",  "中",    "文",       "a",     "##a",     // 15-19
      "play",  "##ing", "##s",      "[",     "]",       // 20-24
      "sep",   "x",     "i",        "Hello", "naive",   // 25-29
      "é",     "##é",                                   // 30-31
  };
  return *vocab;
}

std::unique_ptr<WordPieceTokenizer> Make(WordPieceOptions options = {}) {
  auto tok = WordPieceTokenizer::Create(HandVocab(), options);
  NEODB_CHECK(tok.ok());
  return std::move(tok).value();
}

Strings Pieces(const WordPieceTokenizer& tok, std::string_view text) {
  auto r = tok.TokenizeToStrings(text);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Strings{};
}

TEST(WordPieceTest, SpecialIdsComeFromVocabulary) {
  auto tok = Make();
  EXPECT_EQ(tok->special().pad, 0);
  EXPECT_EQ(tok->special().unk, 1);
  EXPECT_EQ(tok->special().cls, 2);
  EXPECT_EQ(tok->special().sep, 3);
  EXPECT_EQ(tok->special().mask, 4);
  EXPECT_EQ(tok->vocab_size(), static_cast<int32_t>(HandVocab().size()));
  EXPECT_EQ(tok->kind(), "wordpiece");
}

TEST(WordPieceTest, EncodeWrapsInClsSep) {
  auto tok = Make();
  auto ids = tok->Encode("hello world");
  ASSERT_TRUE(ids.ok());
  EXPECT_THAT(*ids, ElementsAre(2, 10, 11, 3));
  auto empty = tok->Encode("");
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(*empty, ElementsAre(2, 3));
  auto bare = tok->Tokenize("");
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->empty());
}

TEST(WordPieceTest, GreedyLongestMatchFirst) {
  auto tok = Make();
  // "una" is tried before "un", so the split is una ##ffable, not un ##aff ##able.
  EXPECT_THAT(Pieces(*tok, "unaffable"), ElementsAre("una", "##ffable"));
  EXPECT_THAT(Pieces(*tok, "playing plays"), ElementsAre("play", "##ing", "play", "##s"));
  EXPECT_THAT(Pieces(*tok, "aaa"), ElementsAre("a", "##a", "##a"));
}

TEST(WordPieceTest, NoFullMatchIsOneUnk) {
  auto tok = Make();
  // "playz": play matches but "##z" does not: the whole word is [UNK].
  EXPECT_THAT(Pieces(*tok, "playz hello"), ElementsAre("[UNK]", "hello"));
  EXPECT_THAT(Pieces(*tok, "zzz"), ElementsAre("[UNK]"));
}

TEST(WordPieceTest, WordsOverMaxCharsAreUnk) {
  auto tok = Make();
  EXPECT_EQ(Pieces(*tok, std::string(100, 'a')).size(), 100u);
  EXPECT_THAT(Pieces(*tok, std::string(101, 'a')), ElementsAre("[UNK]"));
  // The limit counts code points after accent stripping: 60 × "a" + U+0301
  // is 120 code points of input but a 60-character word.
  std::string accented;
  for (int i = 0; i < 60; ++i) accented += "a\xCC\x81";
  EXPECT_EQ(Pieces(*tok, accented).size(), 60u);
  // Multi-byte characters count once: 101 × "é" (kept as é when not stripping).
  WordPieceOptions keep;
  keep.strip_accents = false;
  auto kept = Make(keep);
  std::string e100;
  for (int i = 0; i < 100; ++i) e100 += "\xC3\xA9";
  EXPECT_EQ(Pieces(*kept, e100).size(), 100u);
  EXPECT_THAT(Pieces(*kept, e100 + "\xC3\xA9"), ElementsAre("[UNK]"));
  WordPieceOptions small;
  small.max_input_chars_per_word = 3;
  EXPECT_THAT(Pieces(*Make(small), "aaa aaaa"), ElementsAre("a", "##a", "##a", "[UNK]"));
}

TEST(WordPieceTest, SplitsOnPunctuationAndWhitespace) {
  auto tok = Make();
  EXPECT_THAT(Pieces(*tok, "hello,world!"), ElementsAre("hello", ",", "world", "!"));
  EXPECT_THAT(Pieces(*tok, "\thello\r\n\n world  "), ElementsAre("hello", "world"));
  EXPECT_THAT(Pieces(*tok, "hello\u00a0world\u3000hello"),  // Zs
              ElementsAre("hello", "world", "hello"));
  EXPECT_THAT(Pieces(*tok, "hello\u2028world"), ElementsAre("hello", "world"));
  // "$" is ASCII punctuation by HF's rule though Unicode calls it Sc.
  EXPECT_THAT(tok->PreTokenize("a$b").value(), ElementsAre("a", "$", "b"));
  // Unicode P*: "…" (Po) and "¿" (Po) split; "€" (Sc) does not.
  EXPECT_THAT(tok->PreTokenize("a…b¿c€d").value(), ElementsAre("a", "…", "b", "¿", "c€d"));
}

TEST(WordPieceTest, LowerCasesAndStripsAccents) {
  auto tok = Make();
  EXPECT_THAT(Pieces(*tok, "HELLO Café NAÏVE"), ElementsAre("hello", "cafe", "naive"));
  EXPECT_THAT(Pieces(*tok, "cafe\u0301"), ElementsAre("cafe"));
  // U+0130 lower-cases to "i" + U+0307, whose mark is then stripped.
  EXPECT_THAT(Pieces(*tok, "\u0130"), ElementsAre("i"));
  // Kelvin sign lower-cases to ASCII k; Angstrom sign to å then a.
  EXPECT_THAT(tok->PreTokenize("\u212a\u212b").value(), ElementsAre("ka"));
}

TEST(WordPieceTest, CasedOptionsKeepCaseAndAccents) {
  WordPieceOptions cased;
  cased.lower_case = false;
  auto tok = Make(cased);
  EXPECT_THAT(Pieces(*tok, "Hello hello"), ElementsAre("Hello", "hello"));
  // No lower-casing means no accent stripping either (HF's default), and
  // decomposed input is composed (NFC).
  EXPECT_THAT(tok->PreTokenize("cafe\u0301").value(), ElementsAre("caf\u00e9"));
}

TEST(WordPieceTest, CjkIdeographsAreWordsOfTheirOwn) {
  auto tok = Make();
  EXPECT_THAT(Pieces(*tok, "中文"), ElementsAre("中", "文"));
  EXPECT_THAT(Pieces(*tok, "hello中world"), ElementsAre("hello", "中", "world"));
  // Hiragana is not in HF's ranges: stays one word.
  EXPECT_THAT(tok->PreTokenize("中のテ").value(), ElementsAre("中", "のテ"));
  // CJK compatibility ideograph U+F900 is isolated, then NFD maps it to U+8C48.
  EXPECT_THAT(tok->PreTokenize("a\uf900b").value(), ElementsAre("a", "\u8c48", "b"));
  WordPieceOptions no_cjk;
  no_cjk.tokenize_chinese_chars = false;
  EXPECT_THAT(Make(no_cjk)->PreTokenize("a中b").value(), ElementsAre("a中b"));
}

TEST(WordPieceTest, DropsControlsNulAndReplacementCharacter) {
  auto tok = Make();
  static constexpr char kRaw[] = "hel\0lo\x01 wor\xEF\xBF\xBDld\x7F \xE2\x80\x8B\xC2\xAD";
  const std::string text(kRaw, sizeof(kRaw) - 1);
  EXPECT_THAT(Pieces(*tok, text), ElementsAre("hello", "world"));
  EXPECT_TRUE(tok->PreTokenize(std::string("\0\0", 2)).value().empty());
}

TEST(WordPieceTest, SpecialTokenStringsInTextMapToTheirIds) {
  auto tok = Make();
  EXPECT_THAT(Pieces(*tok, "hello [SEP] world"), ElementsAre("hello", "[SEP]", "world"));
  EXPECT_THAT(Pieces(*tok, "x[MASK]x"), ElementsAre("x", "[MASK]", "x"));
  EXPECT_THAT(Pieces(*tok, "[[SEP]]"), ElementsAre("[", "[SEP]", "]"));
  // Case-sensitive and matched before cleaning, like HF.
  EXPECT_THAT(Pieces(*tok, "[sep]"), ElementsAre("[", "sep", "]"));
  EXPECT_THAT(Pieces(*tok, std::string("[SE\0P]", 6)), ElementsAre("[", "sep", "]"));
  WordPieceOptions literal;
  literal.match_special_tokens = false;
  EXPECT_THAT(Pieces(*Make(literal), "[SEP]"), ElementsAre("[", "sep", "]"));
}

TEST(WordPieceTest, InvalidUtf8IsInvalidArgument) {
  auto tok = Make();
  for (const std::string& bad :
       {std::string("\xFF"), std::string("ab\xC0\xAF"), std::string("\xED\xA0\x80"),
        std::string("\xF4\x90\x80\x80"), std::string("\xE4\xB8"), std::string("\x80"),
        std::string("ok \xE4\xB8\xAD\xE4")}) {
    auto r = tok->Tokenize(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("UTF-8"));
    EXPECT_EQ(tok->Encode(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(WordPieceTest, IdToToken) {
  auto tok = Make();
  EXPECT_EQ(tok->IdToToken(10), "hello");
  EXPECT_EQ(tok->IdToToken(-1), "");
  EXPECT_EQ(tok->IdToToken(tok->vocab_size()), "");
}

TEST(WordPieceTest, CreateRejectsBadVocabularies) {
  auto missing = WordPieceTokenizer::Create({"[PAD]", "[UNK]", "[SEP]", "a"}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("[CLS], [MASK]"));
  auto dup =
      WordPieceTokenizer::Create({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "a"}, {});
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("\"a\" appears twice"));
  EXPECT_FALSE(WordPieceTokenizer::Create({}, {}).ok());
  WordPieceOptions zero;
  zero.max_input_chars_per_word = 0;
  EXPECT_FALSE(WordPieceTokenizer::Create(HandVocab(), zero).ok());
}

}  // namespace
}  // namespace neodb::encoder
