// SentencePiece: train tiny models with TrainSentencePiece, load them through
// LoadTokenizer, check the special-token convention and round trips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "encoder/tokenizer/sentencepiece_adapter.h"
#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/sentencepiece_trainer.h"
#include "encoder/tokenizer/tokenizer.h"
#include "tests/encoder/tokenizer_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

// A few hundred deterministic sentences over a small vocabulary.
std::string Corpus() {
  const std::vector<std::string> words = {
      "the",   "vector", "database", "stores",    "embeddings", "of",      "documents",
      "query", "search", "nearest",  "neighbour", "index",      "encoder", "token",
      "model", "fast",   "small",    "large",     "cells",      "protein", "gene",
      "study", "result", "shows",    "increase",  "in",         "and",     "with"};
  std::mt19937 rng(1234);
  std::string text;
  for (int line = 0; line < 400; ++line) {
    const int n = 4 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      if (i > 0) text += ' ';
      text += words[rng() % words.size()];
    }
    text += ".\n";
  }
  return text;
}

void Train(const ScratchDir& dir, const std::string& prefix, const std::string& type) {
  dir.Write("corpus.txt", Corpus());
  SentencePieceTrainOptions options;
  options.input_files = {dir.File("corpus.txt")};
  options.model_prefix = dir.File(prefix);
  options.vocab_size = 100;
  options.model_type = type;
  options.hard_vocab_limit = false;
  const absl::Status s = TrainSentencePiece(options);
  ASSERT_TRUE(s.ok()) << s;
}

class SentencePieceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SentencePieceTest, TrainLoadAndRoundTrip) {
  ScratchDir dir;
  Train(dir, "tokenizer", GetParam());
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->kind(), "sentencepiece");
  EXPECT_LE((*tok)->vocab_size(), 100);
  EXPECT_GT((*tok)->vocab_size(), 20);
  const SpecialTokens& s = (*tok)->special();
  EXPECT_EQ(s.pad, 0);
  EXPECT_EQ(s.unk, 1);
  EXPECT_EQ(s.cls, 2);
  EXPECT_EQ(s.sep, 3);
  EXPECT_EQ(s.mask, 4);
  EXPECT_EQ((*tok)->IdToToken(4), "[MASK]");
  EXPECT_EQ((*tok)->IdToToken(2), "[CLS]");

  const std::string text = "the vector database stores embeddings of documents.";
  auto ids = (*tok)->Tokenize(text);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_FALSE(ids->empty());
  for (const int32_t id : *ids) {
    EXPECT_GT(id, 4) << "specials inside plain text";
    EXPECT_LT(id, (*tok)->vocab_size());
  }
  auto* sp = dynamic_cast<SentencePieceTokenizer*>(tok->get());
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->Decode(*ids).value(), text);

  auto encoded = (*tok)->Encode(text);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->size(), ids->size() + 2);
  EXPECT_EQ(encoded->front(), 2);
  EXPECT_EQ(encoded->back(), 3);

  // [MASK] is a user-defined symbol: always one piece.
  auto masked = (*tok)->Tokenize("the [MASK] model");
  ASSERT_TRUE(masked.ok());
  EXPECT_THAT(*masked, ::testing::Contains(4));

  EXPECT_EQ((*tok)->Tokenize("bad \xC3").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*tok)->Tokenize("").value().empty());

  // SaveTo writes tokenizer.model; loading it back gives the same ids.
  ScratchDir saved;
  ASSERT_TRUE((*tok)->SaveTo(saved.path()).ok());
  auto back = LoadTokenizer(saved.path());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->Tokenize(text).value(), *ids);
}

INSTANTIATE_TEST_SUITE_P(ModelTypes, SentencePieceTest, ::testing::Values("unigram", "bpe"));

TEST(SentencePieceLoadTest, SingleModelFileWithAnyName) {
  ScratchDir dir;
  Train(dir, "my_spm", "unigram");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->kind(), "sentencepiece");
  // Two *.model files and no tokenizer.model: ambiguous.
  Train(dir, "other", "unigram");
  auto two = LoadTokenizer(dir.path());
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(std::string(two.status().message()), HasSubstr("several SentencePiece models"));
}

TEST(SentencePieceLoadTest, ModelWithoutMaskIsRejected) {
  ScratchDir dir;
  dir.Write("corpus.txt", Corpus());
  // The neodb convention minus the [MASK] user-defined symbol.
  const spm::Result r = spm::Train({{"input", dir.File("corpus.txt")},
                                    {"model_prefix", dir.File("tokenizer")},
                                    {"vocab_size", "100"},
                                    {"hard_vocab_limit", "false"},
                                    {"pad_id", "0"},
                                    {"unk_id", "1"},
                                    {"bos_id", "2"},
                                    {"eos_id", "3"},
                                    {"pad_piece", "[PAD]"},
                                    {"unk_piece", "[UNK]"},
                                    {"bos_piece", "[CLS]"},
                                    {"eos_piece", "[SEP]"}});
  ASSERT_TRUE(r.ok()) << r.message;
  auto tok = LoadTokenizer(dir.path());
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr("lacks the pieces [MASK]"));
}

TEST(SentencePieceLoadTest, DefaultSpmPiecesAreRejectedNamingAllMissing) {
  ScratchDir dir;
  dir.Write("corpus.txt", Corpus());
  const spm::Result r = spm::Train({{"input", dir.File("corpus.txt")},
                                    {"model_prefix", dir.File("tokenizer")},
                                    {"vocab_size", "100"},
                                    {"hard_vocab_limit", "false"}});
  ASSERT_TRUE(r.ok()) << r.message;
  auto tok = LoadTokenizer(dir.path());
  ASSERT_FALSE(tok.ok());
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr("[PAD], [UNK], [CLS], [SEP], [MASK]"));
}

TEST(SentencePieceLoadTest, GarbageModelFileIsRejected) {
  ScratchDir dir;
  dir.Write("tokenizer.model", "this is not a protobuf \x01\x02\x03");
  auto tok = LoadTokenizer(dir.path());
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr("not a valid SentencePiece model"));
  dir.Write("tokenizer.model", "");
  EXPECT_THAT(std::string(LoadTokenizer(dir.path()).status().message()), HasSubstr("is empty"));
}

// Found by fuzz_tokenizer_load (tests/fuzz/corpus/tokenizer_load/
// regress_spm_load_throws): libsentencepiece throws part way through this
// model, and the plugin used to leak the processor it had allocated (the
// AddressSanitizer build of this test reports a leak if it does again).
TEST(SentencePieceLoadTest, ModelThatThrowsWhileLoadingIsRejectedWithoutALeak) {
  const std::string model(
      "\x0a\x0e\x0a\x05\x5b\x50\x41\x44\x5d\x15\x00\x00\x00\x00\x18\x03"
      "\x0a\x0e\x0a\x05\x5b\x55\x9c\x4b\x5d\x15\x00\x00\x00\x00\x18\x02"
      "\x0a\x0e\x0a\x0c\x00\x00\x00\x53\x5d\x15\x00\x00\x00\x00\x18\x03"
      "\x0a\x0e\x0a\x05\x5b\x53\x45\x50\x5d\x15\x00\x00\x00\x00\x18\x03"
      "\x0a\x0f\x0a\x06\x5b\x4d\x41\x53\x4b\x5d\x15\x00\x00\x00\x00\x18"
      "\x04\x0a\x0a\x0a\x03\xe2\x96\x81\x15\x0f\xfc\xd2\x65\x15\x01\x7b"
      "\x22\x76\x65\x70\x43\x2b\xc0\x0a\x08\x0a\x01\x61\x15\x3d\xb0\x3d"
      "\xc0\x0a\x08\x0a\x01\x63\x15\x3d\xb0\x3d\x72",
      123);
  auto tok = SentencePieceTokenizer::FromSerializedProto(model, "x.model");
  ASSERT_FALSE(tok.ok());
  EXPECT_FALSE(std::string(tok.status().message()).empty());
}

TEST(SentencePieceTrainTest, RejectsBadOptions) {
  SentencePieceTrainOptions options;
  EXPECT_EQ(TrainSentencePiece(options).code(), absl::StatusCode::kInvalidArgument);
  options.input_files = {"/nonexistent/corpus.txt"};
  options.model_prefix = "/tmp/x";
  EXPECT_EQ(TrainSentencePiece(options).code(), absl::StatusCode::kNotFound);
  ScratchDir dir;
  dir.Write("c.txt", Corpus());
  options.input_files = {dir.File("c.txt")};
  options.model_type = "word2vec";
  EXPECT_THAT(std::string(TrainSentencePiece(options).message()), HasSubstr("unigram or bpe"));
  options.model_type = "bpe";
  options.vocab_size = 3;
  EXPECT_EQ(TrainSentencePiece(options).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::encoder
