// Admission by text length: the byte bounds, the bounded token count and the
// per-request budget (engine/token_budget.h).
#include "engine/token_budget.h"

#include <atomic>

#include "engine/fake_embedder.h"
#include "engine/text_checks.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

using ::absl::StatusCode;

// A FakeEmbedder that counts the bytes it was asked to tokenize, so a test
// can see that a count stopped early or never started, and that refuses
// invalid UTF-8 as real tokenizers do.
class CountingEmbedder : public FakeEmbedder {
 public:
  using FakeEmbedder::FakeEmbedder;
  absl::StatusOr<int> CountTokens(std::string_view prefix, std::string_view text) const override {
    bytes_ += static_cast<int64_t>(prefix.size() + text.size());
    if (FindInvalidUtf8(text) != std::string_view::npos) {
      return absl::InvalidArgumentError("invalid UTF-8");
    }
    return FakeEmbedder::CountTokens(prefix, text);
  }
  int64_t bytes() const { return bytes_; }

 private:
  mutable std::atomic<int64_t> bytes_{0};
};

std::string WordsText(int n) {
  std::string t;
  for (int i = 0; i < n; ++i) t += "word" + std::to_string(i) + (i % 7 == 6 ? "\n" : " ");
  return t;
}

TEST(TokenBudgetTest, BoundedCountEqualsFullCountWhenUnderTheLimit) {
  FakeEmbedder fake(4, 512);
  const std::string text = WordsText(5000);  // ~45 KB: many pieces
  ASSERT_GT(text.size(), 40000u);
  bool complete = false;
  auto n = CountTokensUpTo(fake, "query:", text, 1 << 20, &complete);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_TRUE(complete);
  EXPECT_EQ(*n, *fake.CountTokens("query:", text));
}

TEST(TokenBudgetTest, CountStopsSoonAfterTheLimit) {
  CountingEmbedder fake(4, 512);
  const std::string text = WordsText(200000);  // ~2 MB
  bool complete = true;
  auto n = CountTokensUpTo(fake, "", text, 100, &complete);
  ASSERT_TRUE(n.ok());
  EXPECT_GT(*n, 100);
  EXPECT_FALSE(complete);
  EXPECT_LE(fake.bytes(), 2 * 4096);  // one piece past the limit, not 2 MB
}

TEST(TokenBudgetTest, TextWithoutWhitespaceIsCutAtCharacterBoundaries) {
  CountingEmbedder fake(4, 512);
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "\xe2\x82\xac";  // 9 KB of '€', no spaces
  // Cut into 3 pieces, each one "word" to the fake. 4096 is not a multiple
  // of 3: a cut at a fixed offset would split a character, and the counting
  // embedder (like real tokenizers) would refuse the piece.
  auto n = CountTokensUpTo(fake, "", text, 1000);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2 + 3);
}

TEST(TokenBudgetTest, OverflowErrorRejectsHugeTextOnBytesAlone) {
  CountingEmbedder fake(4, 512);
  RequestTokenBudget budget(fake, 0);
  const std::string huge(512 * kMaxBytesPerToken + 1, 'a');
  absl::Status s = budget.Add("document 'a': text", "", huge, encoder::Overflow::kError);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("bytes"), std::string::npos) << s;
  EXPECT_EQ(fake.bytes(), 0);  // never tokenized
}

TEST(TokenBudgetTest, OverflowErrorNamesTheCountOfShortTexts) {
  FakeEmbedder fake(4, 32);
  RequestTokenBudget budget(fake, 0);
  absl::Status s = budget.Add("text #0", "", WordsText(40), encoder::Overflow::kError, " (hint)");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "text #0 has 42 tokens, over the model's maximum of 32 (hint)");
  EXPECT_TRUE(budget.Add("text #1", "", WordsText(30), encoder::Overflow::kError).ok());
  EXPECT_EQ(budget.tokens(), 32);
}

TEST(TokenBudgetTest, ChunkedTextsCountTheirChunksAgainstTheRequestBudget) {
  FakeEmbedder fake(4, 6);  // windows of 4 words, 6 tokens framed
  RequestTokenBudget budget(fake, 60);
  // 20 words: 5 chunks of 6 tokens = 30.
  ASSERT_TRUE(budget.Add("text #0", "", WordsText(20), encoder::Overflow::kChunk).ok());
  EXPECT_EQ(budget.tokens(), 30);
  ASSERT_TRUE(budget.Add("text #1", "", WordsText(20), encoder::Overflow::kChunk).ok());
  absl::Status s = budget.Add("text #2", "", "one", encoder::Overflow::kChunk);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("text #2"), std::string::npos) << s;
  EXPECT_NE(s.message().find("--max-request-tokens"), std::string::npos) << s;
}

TEST(TokenBudgetTest, ChunkedTextOverTheBudgetStopsCountingEarly) {
  CountingEmbedder fake(4, 512);
  RequestTokenBudget budget(fake, 1000);
  // Over 1000 × kMaxBytesPerToken bytes: refused on its size alone.
  const std::string text = WordsText(200000);
  absl::Status s = budget.Add("text #0", "", text, encoder::Overflow::kChunk);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(fake.bytes(), 0);
  // Within the byte bound but over in tokens: counted only past the budget.
  RequestTokenBudget budget2(fake, 1000);
  std::string dense;
  while (dense.size() < 31000) dense += "a ";  // 15500 one-letter words
  s = budget2.Add("text #0", "", dense, encoder::Overflow::kChunk);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  EXPECT_LE(fake.bytes(), 4096);  // the first piece already passes 1000
}

}  // namespace
}  // namespace neodb::engine
