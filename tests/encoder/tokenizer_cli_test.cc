// Runs `neodb tokenizer train`: the files it writes load through
// LoadTokenizer with neodb's special ids, case folding is the default and
// --cased keeps case, and bad arguments fail with a clear exit code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/encoder/cli_runner.h"
#include "encoder/tokenizer/tokenizer.h"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
namespace fs = std::filesystem;

using testing_util::CliResult;
using testing_util::RunNeodb;

// Sentences of pseudo-words built from syllables, some capitalised, so a
// 300-piece vocabulary is reachable and case matters.
std::string Corpus() {
  const std::vector<std::string> syllables = {"ka", "lo",  "mi",  "ne",  "ro",  "su",  "ta", "vi",
                                              "ze", "por", "tin", "gal", "fen", "dru", "shi"};
  std::mt19937 rng(99);
  std::string text;
  for (int line = 0; line < 3000; ++line) {
    const int words = 5 + static_cast<int>(rng() % 10);
    for (int w = 0; w < words; ++w) {
      std::string word;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int s = 0; s < n; ++s) word += syllables[rng() % syllables.size()];
      if (rng() % 4 == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
      text += (w ? " " : "") + word;
    }
    text += ".\n";
  }
  return text;
}

class TokenizerCliTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteBytes(dir_.Sub("corpus.txt"), Corpus()); }
  std::string Train(const std::string& out, const std::string& extra = "") {
    return "tokenizer train --input " + dir_.Sub("corpus.txt") + " --vocab-size 300 --out " + out +
           " " + extra;
  }
  TempDir dir_;
};

TEST_F(TokenizerCliTest, TrainsALoadableUncasedUnigramModel) {
  const std::string out = dir_.Sub("tok");
  const CliResult r = RunNeodb(Train(out));
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nmt_nfkc_cf"));
  EXPECT_TRUE(fs::is_regular_file(out + "/tokenizer.model"));
  EXPECT_TRUE(fs::is_regular_file(out + "/tokenizer.vocab"));
  EXPECT_TRUE(fs::is_regular_file(out + "/special_tokens_map.json"));
  EXPECT_FALSE(fs::exists(out + "/.tokenizer.training.model"));
  auto tok = LoadTokenizer(out);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->kind(), "sentencepiece");
  EXPECT_EQ((*tok)->vocab_size(), 300);
  EXPECT_EQ((*tok)->special().pad, 0);
  EXPECT_EQ((*tok)->special().unk, 1);
  EXPECT_EQ((*tok)->special().cls, 2);
  EXPECT_EQ((*tok)->special().sep, 3);
  EXPECT_EQ((*tok)->special().mask, 4);
  // Case folding is in the model: both spellings give the same ids.
  auto upper = (*tok)->Tokenize("Kalo Porvi");
  auto lower = (*tok)->Tokenize("kalo porvi");
  ASSERT_TRUE(upper.ok() && lower.ok());
  EXPECT_EQ(*upper, *lower);
  EXPECT_FALSE(lower->empty());
}

TEST_F(TokenizerCliTest, CasedKeepsCaseAndBpeWorks) {
  const std::string out = dir_.Sub("cased");
  const CliResult r = RunNeodb(Train(out, "--cased --model-type bpe"));
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("trained bpe tokenizer (nmt_nfkc,"));
  auto tok = LoadTokenizer(out);
  ASSERT_TRUE(tok.ok()) << tok.status();
  auto upper = (*tok)->Tokenize("Kalo Porvi");
  auto lower = (*tok)->Tokenize("kalo porvi");
  ASSERT_TRUE(upper.ok() && lower.ok());
  EXPECT_NE(*upper, *lower);
}

TEST_F(TokenizerCliTest, RefusesToOverwriteWithoutForce) {
  const std::string out = dir_.Sub("again");
  ASSERT_EQ(RunNeodb(Train(out)).rc, 0);
  const CliResult again = RunNeodb(Train(out));
  EXPECT_EQ(again.rc, 2);
  EXPECT_THAT(again.output, HasSubstr("use --force"));
  EXPECT_EQ(RunNeodb(Train(out, "--force")).rc, 0);
}

TEST_F(TokenizerCliTest, BadArgumentsFail) {
  const CliResult type = RunNeodb(Train(dir_.Sub("x"), "--model-type wordpiece"));
  EXPECT_NE(type.rc, 0);
  EXPECT_THAT(type.output, HasSubstr("--model-type"));
  const CliResult missing =
      RunNeodb("tokenizer train --input " + dir_.Sub("nope.txt") + " --out " + dir_.Sub("y"));
  EXPECT_NE(missing.rc, 0);
  EXPECT_THAT(missing.output, HasSubstr("nope.txt"));
  // A vocabulary the corpus cannot fill is SentencePiece's error, reported.
  const CliResult big = RunNeodb("tokenizer train --input " + dir_.Sub("corpus.txt") +
                              " --vocab-size 50000 --out " + dir_.Sub("z"));
  EXPECT_EQ(big.rc, 1);
  EXPECT_THAT(big.output, HasSubstr("SentencePiece training failed"));
  EXPECT_FALSE(fs::exists(dir_.Sub("z") + "/tokenizer.model"));
}

}  // namespace
}  // namespace neodb::encoder
