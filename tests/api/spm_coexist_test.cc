// SentencePiece inside a binary that links the gRPC service (libprotobuf):
// Debian's libsentencepiece bundles its own protobuf-lite, and before the
// plugin isolation (encoder/tokenizer/spm_plugin) the two copies interposed
// each other, so this binary either crashed before main() or aborted on the
// first SentencePiece call. Here both are exercised in one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/sentencepiece_trainer.h"
#include "neodb/v1/neodb.pb.h"
#include "tests/encoder/tokenizer_test_util.h"

namespace neodb::api {
namespace {

using encoder::testing::ScratchDir;

std::string Corpus() {
  const std::vector<std::string> words = {"vector", "search",  "protein", "gene",  "index",
                                          "query",  "nearest", "cells",   "model", "token"};
  std::string text;
  unsigned state = 7;
  for (int line = 0; line < 300; ++line) {
    for (int i = 0; i < 6; ++i) {
      state = state * 1103515245u + 12345u;
      if (i > 0) text += ' ';
      text += words[(state >> 16) % words.size()];
    }
    text += ".\n";
  }
  return text;
}

TEST(SpmCoexistTest, TrainAndTokenizeNextToLibprotobuf) {
  // libprotobuf first: a generated message round-trips.
  neodb::v1::EmbedRequest request;
  request.add_texts("protein search");
  request.set_normalize(true);
  const std::string wire = request.SerializeAsString();
  neodb::v1::EmbedRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.texts(0), "protein search");

  ScratchDir dir;
  dir.Write("corpus.txt", Corpus());
  encoder::SentencePieceTrainOptions options;
  options.input_files = {dir.File("corpus.txt")};
  options.model_prefix = dir.File("tokenizer");
  options.vocab_size = 60;
  options.hard_vocab_limit = false;
  const absl::Status trained = encoder::TrainSentencePiece(options);
  ASSERT_TRUE(trained.ok()) << trained;

  auto tok = encoder::SentencePieceTokenizer::FromFile(dir.File("tokenizer.model"));
  ASSERT_TRUE(tok.ok()) << tok.status();
  const auto ids = (*tok)->Tokenize("protein search [MASK] gene");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_FALSE(ids->empty());
  EXPECT_NE(std::find(ids->begin(), ids->end(), (*tok)->special().mask), ids->end());
  const auto text = (*tok)->Decode(*ids);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "protein search [MASK] gene");

  // And libprotobuf still works after SentencePiece ran.
  neodb::v1::EmbedRequest again;
  ASSERT_TRUE(again.ParseFromString(wire));
  EXPECT_TRUE(again.normalize());
}

TEST(SpmCoexistTest, BadModelIsAnErrorNotACrash) {
  auto tok = encoder::SentencePieceTokenizer::FromSerializedProto("not a model", "bogus");
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("bogus is not a valid SentencePiece model"),
            std::string::npos)
      << tok.status();
}

}  // namespace
}  // namespace neodb::api
