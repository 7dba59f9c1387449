// Runs with NEODB_SPM_PLUGIN naming a file that does not exist (set by
// tests/encoder/CMakeLists.txt): SentencePiece must fail with a clear status
// naming the plugin path, never crash, while WordPiece stays unaffected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/sentencepiece_trainer.h"
#include "tests/encoder/tokenizer_test_util.h"

namespace neodb::encoder {
namespace {

TEST(SpmPluginMissingTest, LoadAndTrainReportThePluginPath) {
  const char* env = std::getenv("NEODB_SPM_PLUGIN");
  ASSERT_NE(env, nullptr) << "run through ctest, which sets NEODB_SPM_PLUGIN";
  const std::string expected = std::string("cannot load the SentencePiece plugin ") + env + ": ";

  auto tok = SentencePieceTokenizer::FromSerializedProto("bytes", "model");
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find(expected), std::string::npos) << tok.status();

  testing::ScratchDir dir;
  dir.Write("corpus.txt", "a b c\n");
  SentencePieceTrainOptions options;
  options.input_files = {dir.File("corpus.txt")};
  options.model_prefix = dir.File("m");
  options.vocab_size = 10;
  const absl::Status s = TrainSentencePiece(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find(expected), std::string::npos) << s;
}

}  // namespace
}  // namespace neodb::encoder
