// Pair files: every malformed input is an INVALID_ARGUMENT naming the file and
// the line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "common/atomic_file.h"
#include "common/env_memory.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"
#include "encoder/train/finetune.h"
#include "encoder/train/json_lines.h"
#include "encoder/train/mlm_objective.h"
#include "encoder/train/pairs.h"

namespace neodb::encoder::train {
namespace {

using ::testing::HasSubstr;

// Whitespace-separated words; id = 1000 + word length (enough to count tokens).
class WordTokenizer : public Tokenizer {
 public:
  absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const override {
    std::vector<int32_t> ids;
    std::istringstream in{std::string(text)};
    std::string w;
    while (in >> w) ids.push_back(1000 + static_cast<int32_t>(w.size()));
    return ids;
  }
  const SpecialTokens& special() const override { return special_; }
  int32_t vocab_size() const override { return 2000; }
  std::string IdToToken(int32_t id) const override { return std::to_string(id); }
  std::string_view kind() const override { return "test"; }
  absl::Status SaveTo(const std::string&) const override { return absl::OkStatus(); }

 private:
  SpecialTokens special_;
};

void ExpectError(const std::string& text, const std::string& where, const std::string& what) {
  auto r = ParsePairs(text, "p.jsonl");
  ASSERT_FALSE(r.ok()) << text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(where)) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(what)) << r.status();
}

const char kGood[] = R"({"query": "q one", "positive": "p one", "negatives": ["n1", "n2"]})";

TEST(TrainPairs, ParsesGoodLinesAndSkipsBlankOnes) {
  auto r = ParsePairs(std::string(kGood) + "\n\n" + R"({"query":"q2","positive":"p2"})" + "\n",
                      "p.jsonl");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].negatives, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ((*r)[1].line, 3);
  EXPECT_TRUE((*r)[1].negatives.empty());
}

TEST(TrainPairs, MalformedInputNamesTheLine) {
  const std::string g = std::string(kGood) + "\n";
  ExpectError(g + g + "{\"query\": \"x\", \n", "p.jsonl:3:", "malformed JSON");
  ExpectError(g + "[1, 2]\n", "p.jsonl:2:", "expected a JSON object");
  ExpectError(g + R"({"positive": "p"})", "p.jsonl:2:", "missing field \"query\"");
  ExpectError(R"({"query": "q"})", "p.jsonl:1:", "missing field \"positive\"");
  ExpectError(R"({"query": 5, "positive": "p"})", "p.jsonl:1:", "\"query\" must be a string");
  ExpectError(R"({"query": "  ", "positive": "p"})", "p.jsonl:1:", "\"query\" is empty");
  ExpectError(R"({"query": "q", "positive": ""})", "p.jsonl:1:", "\"positive\" is empty");
  ExpectError(R"({"query": "q", "positive": "p", "negatives": "n"})",
              "p.jsonl:1:", "must be an array");
  ExpectError(R"({"query": "q", "positive": "p", "negatives": ["a", 3]})",
              "p.jsonl:1:", "negatives[1] must be a string");
  ExpectError(R"({"query": "q", "positive": "p", "negatives": [""]})",
              "p.jsonl:1:", "negatives[0] is empty");
  ExpectError("\n\n", "p.jsonl", "no pairs");
}

TEST(TrainPairs, TooLongAfterTokenisingNamesLineFieldAndLengths) {
  auto pairs = ParsePairs(
      std::string(kGood) + "\n" + R"({"query": "q", "positive": "a b c d e f g"})", "p.jsonl");
  ASSERT_TRUE(pairs.ok());
  WordTokenizer tok;
  auto ok = TokenizePairs(*pairs, tok, 9, "p.jsonl");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[1].positive.front(), 101);
  EXPECT_EQ((*ok)[1].positive.back(), 102);
  EXPECT_EQ((*ok)[1].positive.size(), 9u);
  auto bad = TokenizePairs(*pairs, tok, 8, "p.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("p.jsonl:2: positive is 9 tokens"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("maximum length 8"));
}

TEST(TrainPairs, TruncateKeepsTheFirstTokensAndTheFraming) {
  auto pairs = ParsePairs(R"({"query": "q", "positive": "a bb ccc dddd eeeee ffffff g"})", "p.jsonl");
  ASSERT_TRUE(pairs.ok());
  WordTokenizer tok;
  auto cut = TokenizePairs(*pairs, tok, 5, "p.jsonl", /*truncate=*/true);
  ASSERT_TRUE(cut.ok()) << cut.status();
  // [CLS] a bb ccc [SEP]: the first 3 words (ids 1000 + length), framed.
  EXPECT_EQ((*cut)[0].positive, (std::vector<int32_t>{101, 1001, 1002, 1003, 102}));
  EXPECT_EQ((*cut)[0].query, (std::vector<int32_t>{101, 1001, 102}));  // short: untouched
}

TEST(TrainPairs, MissingFileIsNotFound) {
  EXPECT_EQ(ReadPairs("/nonexistent/pairs.jsonl").status().code(), absl::StatusCode::kNotFound);
}

// The training inputs read through the Env they are given: a memory Env
// serves a pair file, a checkpoint's config.json and a file to hash with no
// file on disk.
TEST(TrainFileReads, GoThroughTheEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(env->CreateDir("/m").ok());
  const std::string pairs = "{\"query\": \"q\", \"positive\": \"p\"}\n";
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/pairs.jsonl", {pairs}).ok());
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/m/config.json", {R"({"torch_dtype": "float16"})"}).ok());

  EXPECT_EQ(*ReadWholeFile("/pairs.jsonl", "pair file", env.get()), pairs);
  absl::Status absent = ReadWholeFile("/none.jsonl", "pair file", env.get()).status();
  EXPECT_TRUE(absl::IsNotFound(absent));
  EXPECT_EQ(absent.message(), "cannot open pair file /none.jsonl");
  EXPECT_TRUE(absl::IsNotFound(ReadWholeFile("/pairs.jsonl", "pair file").status()));  // not on disk

  absl::StatusOr<DType> dtype = CheckpointStorageDType("/m", env.get());
  ASSERT_TRUE(dtype.ok()) << dtype.status();
  EXPECT_EQ(*dtype, DType::kF16);
  absl::StatusOr<std::string> h1 = FileHash("/pairs.jsonl", env.get());
  absl::StatusOr<std::string> h2 = FileHash("/m/config.json", env.get());
  ASSERT_TRUE(h1.ok() && h2.ok());
  EXPECT_EQ(h1->size(), 16u);
  EXPECT_NE(*h1, *h2);
  EXPECT_TRUE(absl::IsNotFound(FileHash("/none", env.get()).status()));
}

// TokenizeCorpus reads its corpus a line at a time through the Env.
TEST(TrainFileReads, CorpusThroughTheEnv) {
  auto tokenizer = WordPieceTokenizer::FromVocabText(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n", {}, "vocab.txt");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::unique_ptr<Env> env = NewMemEnv();
  ASSERT_TRUE(WriteFileAtomically(env.get(), "/corpus.txt", {"hello world\n\nworld"}).ok());
  absl::StatusOr<std::vector<int32_t>> stream =
      TokenizeCorpus("/corpus.txt", **tokenizer, env.get());
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::vector<int32_t> want = *(*tokenizer)->Tokenize("hello world");
  const std::vector<int32_t> last = *(*tokenizer)->Tokenize("world");
  want.insert(want.end(), last.begin(), last.end());
  EXPECT_EQ(*stream, want);
  EXPECT_EQ(TokenizeCorpus("/none.txt", **tokenizer, env.get()).status().message(),
            "cannot open corpus /none.txt");
}

}  // namespace
}  // namespace neodb::encoder::train
