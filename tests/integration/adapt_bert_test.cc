// `neodb adapt` on a collection served by a BERT-family model (the real
// all-MiniLM-L6-v2 from $NEODB_MINILM_DIR; skipped with the reason when
// unset): mined, trained, measured; the output is a BERT directory the server
// loads (--apply reindexes the collection onto it) with the source's
// sentence-transformers files; --rollback returns to MiniLM.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/adapt_test_util.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

namespace fs = std::filesystem;

TEST(AdaptBertTest, TrainsAppliesAndRollsBackAMiniLmCollection) {
#ifndef NEODB_HAVE_ENCODER
  GTEST_SKIP() << "neodb adapt needs the encoder";
#endif
  const char* minilm = std::getenv("NEODB_MINILM_DIR");
  if (minilm == nullptr) GTEST_SKIP() << "NEODB_MINILM_DIR is not set (tools/test.sh sets it)";
  TestDir dir("adapt_bert");
  // A copy inside the test's directory, the server's --models-dir.
  const std::string model = dir.Sub("minilm");
  fs::copy(minilm, model, fs::copy_options::recursive);
  const std::vector<std::string> serve = {"--data-dir", dir.Sub("data"), "--model",
                                          model,        "--models-dir",  dir.Sub("")};
  ServerProcess server(serve);
  ASSERT_TRUE(server.Start());
  Admin c(server);
  std::vector<std::string> texts;
  c.CreateWithDocs("c", &texts);
  const std::string old_id = c.Describe("c").model_id();
  const std::string pairs = dir.Sub("pairs.jsonl");
  WritePrefixPairs(texts, pairs);
  const std::string out = dir.Sub("adapted");
  CommandResult r = RunNeodbCapture(
      absl::StrCat("adapt --collection c --pairs ", pairs, " --server ", server.address(),
                   " --eval-split 0.25 --steps 3 --batch-size 8 --negatives 1 --out ", out,
                   " --apply --min-gain -2"),
      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("(bert)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("hybrid   new"), std::string::npos) << r.out;
  const nlohmann::json lineage = ReadJsonFile(out + "/lineage.json");
  const std::string new_id = lineage.value("model_id", "");
  EXPECT_EQ(lineage["parent"].value("model_id", ""), old_id);
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ(new_id.rfind("bert-", 0), 0u) << new_id;
  EXPECT_EQ(ReadJsonFile(out + "/config.json").value("model_type", ""), "bert");
  for (const char* f : {"modules.json", "sentence_bert_config.json", "1_Pooling/config.json",
                        "tokenizer.json", "vocab.txt"}) {
    EXPECT_EQ(fs::exists(fs::path(model) / f), fs::exists(fs::path(out) / f)) << f;
  }
  // Applied: the server loaded the trained BERT and reindexed onto it.
  EXPECT_NE(r.out.find("applied: c is on " + new_id), std::string::npos) << r.out;
  c.ExpectWhole("c", new_id);
  r = RunNeodbCapture(absl::StrCat("adapt --rollback c --server ", server.address()),
                      dir.Sub(""));
  ASSERT_EQ(r.status, 0) << r.err;
  c.ExpectWhole("c", old_id);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
