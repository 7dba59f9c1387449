// Runs the neodb binary: `neodb finetune` and `neodb eval` are registered,
// print metrics and progress, and exit non-zero with a line-numbered message
// on bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/encoder/cli_runner.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using testing_util::CliResult;
using testing_util::RunNeodb;

class TrainCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("neodb_train_cli_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    std::ofstream vocab(root_ / "vocab.txt");
    vocab << "[PAD]\n";
    for (int i = 1; i < 100; ++i) vocab << "[unused" << i << "]\n";
    vocab << "[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (const char* w : {"red", "green", "blue", "apple", "grass", "sky", "the"})
      vocab << w << "\n";
    vocab.close();
    const CliResult init = RunNeodb("model init --preset tiny --seed 1 --vocab " +
                                 (root_ / "vocab.txt").string() + " --out " + Model());
    ASSERT_EQ(init.rc, 0) << init.output;
    std::ofstream pairs(root_ / "pairs.jsonl");
    pairs << R"({"query": "red", "positive": "apple"})"
          << "\n"
          << R"({"query": "green", "positive": "grass", "negatives": ["the sky"]})"
          << "\n"
          << R"({"query": "blue", "positive": "sky"})"
          << "\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string Model() const { return (root_ / "model").string(); }
  std::string Path(const char* name) const { return (root_ / name).string(); }
  fs::path root_;
};

TEST_F(TrainCliTest, EvalPrintsTheFourMetrics) {
  const CliResult r = RunNeodb("eval --model " + Model() + " --pairs " + Path("pairs.jsonl"));
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("R@1 "));
  EXPECT_THAT(r.output, HasSubstr("MRR@10 "));
  EXPECT_THAT(r.output, HasSubstr("nDCG@10 "));
  EXPECT_THAT(r.output, HasSubstr("(3 queries, pool 4)"));
  const CliResult cls =
      RunNeodb("eval --model " + Model() + " --pairs " + Path("pairs.jsonl") + " --pooling cls");
  EXPECT_EQ(cls.rc, 0) << cls.output;
  EXPECT_NE(
      RunNeodb("eval --model " + Model() + " --pairs " + Path("pairs.jsonl") + " --pooling max").rc,
      0);
}

TEST_F(TrainCliTest, FinetuneRunsAndReportsProgress) {
  const CliResult r = RunNeodb("finetune --model " + Model() + " --train " + Path("pairs.jsonl") +
                            " --eval " + Path("pairs.jsonl") + " --out " + Path("out") +
                            " --steps 3 --batch-size 2 --warmup 1 --lr 1e-3");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("eval before:"));
  EXPECT_THAT(r.output, HasSubstr("step 3/3"));
  EXPECT_THAT(r.output, HasSubstr("ETA"));
  EXPECT_THAT(r.output, HasSubstr("eval after:"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "model.safetensors"));
  // The output is a checkpoint the rest of the CLI reads.
  const CliResult info = RunNeodb("model info --model " + Path("out"));
  EXPECT_EQ(info.rc, 0) << info.output;
}

TEST_F(TrainCliTest, MalformedPairFileExitsWithTheLineNumber) {
  std::ofstream(root_ / "bad.jsonl") << R"({"query": "red", "positive": "apple"})"
                                     << "\n{\"query\": \"red\"\n";
  const CliResult r = RunNeodb("eval --model " + Model() + " --pairs " + Path("bad.jsonl"));
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bad.jsonl:2: malformed JSON"));
  const CliResult f = RunNeodb("finetune --model " + Model() + " --train " + Path("bad.jsonl") +
                            " --out " + Path("out2") + " --steps 1 --batch-size 1");
  EXPECT_EQ(f.rc, 2) << f.output;
  EXPECT_THAT(f.output, HasSubstr("bad.jsonl:2:"));
  EXPECT_FALSE(fs::exists(root_ / "out2"));
}

// Without a GPU, --device cuda is an error naming what is missing, never a
// CPU run in its place (with one, finetune trains there: tests/encoder/
// cuda_train_test.cc checks its gradients).
TEST_F(TrainCliTest, TrainingOnCudaWithoutAGpuIsRefusedNotFaked) {
  for (const std::string device : {"cuda", "cuda:1"}) {
    const CliResult f = RunNeodb("finetune --model " + Model() + " --train " + Path("pairs.jsonl") +
                                 " --out " + Path("out_cuda") + " --steps 1 --device " + device);
    if (f.output.find("training on cuda:") != std::string::npos) GTEST_SKIP() << "a GPU is here";
    EXPECT_EQ(f.rc, 1) << f.output;  // UNAVAILABLE
    EXPECT_THAT(f.output, HasSubstr("--device cuda:"));
    EXPECT_THAT(f.output, HasSubstr("no CUDA device to train on"));
    EXPECT_FALSE(fs::exists(root_ / "out_cuda"));
    const CliResult p = RunNeodb("pretrain --model " + Model() + " --corpus " +
                                 Path("pairs.jsonl") + " --out " + Path("out_pre") +
                                 " --steps 1 --device " + device);
    EXPECT_EQ(p.rc, 1) << p.output;
    EXPECT_THAT(p.output, HasSubstr("no CUDA device to train on"));
    EXPECT_FALSE(fs::exists(root_ / "out_pre"));
  }
  const CliResult bad = RunNeodb("finetune --model " + Model() + " --train " +
                                 Path("pairs.jsonl") + " --out " + Path("out_bad") +
                                 " --steps 1 --device tpu");
  EXPECT_EQ(bad.rc, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("device must be cpu, cuda, cuda:N or auto"));
}

TEST_F(TrainCliTest, EvalOnAutoMatchesTheCpuWithoutAGpu) {
  const std::string base = "eval --model " + Model() + " --pairs " + Path("pairs.jsonl");
  const CliResult cpu = RunNeodb(base + " --device cpu");
  ASSERT_EQ(cpu.rc, 0) << cpu.output;
  const CliResult autod = RunNeodb(base + " --device auto");
  ASSERT_EQ(autod.rc, 0) << autod.output;
  if (autod.output.find("chose cuda") != std::string::npos) GTEST_SKIP() << "a GPU is here";
  EXPECT_THAT(autod.output, HasSubstr("--device auto chose cpu"));
  EXPECT_THAT(autod.output, HasSubstr(cpu.output));  // the same metrics line
  const CliResult cuda = RunNeodb(base + " --device cuda");
  EXPECT_EQ(cuda.rc, 1) << cuda.output;
  EXPECT_THAT(cuda.output, HasSubstr("no CUDA device"));
}

}  // namespace
}  // namespace neodb::encoder::train
