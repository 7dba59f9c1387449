// Runs the neodb binary: `neodb model init`, `convert` and `info`, their
// exit codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/encoder/cli_runner.h"
#include "encoder/checkpoint/weights.h"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
namespace fs = std::filesystem;

using testing_util::CliResult;
using testing_util::RunNeodb;

std::string Field(const std::string& output, const std::string& key) {
  const size_t at = output.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = output.find_first_not_of(' ', at + key.size());
  return output.substr(begin, output.find('\n', begin) - begin);
}

class ModelCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string vocab = "[PAD]\n";
    for (int i = 1; i < 50; ++i) vocab += "tok" + std::to_string(i) + "\n";
    testing::WriteBytes(dir_.Sub("vocab.txt"), vocab);
  }
  // A model whose vocab.txt has the special tokens, so that its tokenizer
  // loads (convert and init --like copy the tokenizer through loading it).
  std::string InitLoadable(const std::string& out) {
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (int i = 5; i < 50; ++i) vocab += "tok" + std::to_string(i) + "\n";
    testing::WriteBytes(dir_.Sub("vocab_sp.txt"), vocab);
    return "model init --preset tiny --seed 3 --vocab " + dir_.Sub("vocab_sp.txt") + " --out " + out;
  }
  // `extra` may not repeat --seed; use `seed`.
  std::string Init(const std::string& out, const std::string& extra = "", int seed = 3) {
    return "model init --preset tiny --seed " + std::to_string(seed) + " --vocab " +
           dir_.Sub("vocab.txt") + " --out " + out + " " + extra;
  }
  TempDir dir_;
};

TEST_F(ModelCliTest, InitWritesALoadableCheckpoint) {
  const std::string out = dir_.Sub("m");
  CliResult r = RunNeodb(Init(out));
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/config.json"));
  EXPECT_TRUE(fs::exists(out + "/model.safetensors"));
  EXPECT_EQ(testing::ReadBytes(out + "/vocab.txt"), testing::ReadBytes(dir_.Sub("vocab.txt")));
  absl::StatusOr<NeoBertWeights> w = LoadCheckpoint(out, {.load_decoder = true});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->config.vocab_size, 50);  // lines of vocab.txt
  EXPECT_EQ(w->config.hidden_size, 64);
  EXPECT_EQ(w->model_id, RandomWeights(w->config, 3).model_id);
  EXPECT_THAT(r.output, HasSubstr(w->model_id));
  // Nothing but the model directory and the vocab beside it.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    ++entries;
    (void)e;
  }
  EXPECT_EQ(entries, 2);

  CliResult info = RunNeodb("model info --model " + out);
  ASSERT_EQ(info.rc, 0) << info.output;
  EXPECT_EQ(Field(info.output, "model_id"), w->model_id);
  EXPECT_EQ(Field(info.output, "hidden_size"), "64");
  EXPECT_EQ(Field(info.output, "vocab_size"), "50");
  EXPECT_EQ(Field(info.output, "dtype"), "F32");
  EXPECT_THAT(Field(info.output, "parameters"), HasSubstr(std::to_string(ParameterCount(*w))));
}

TEST_F(ModelCliTest, ConvertStoresF16AndKeepsTokenizerAndHead) {
  const std::string in = dir_.Sub("m"), out = dir_.Sub("m16");
  ASSERT_EQ(RunNeodb(InitLoadable(in)).rc, 0);
  CliResult r = RunNeodb("model convert --model " + in + " --out " + out + " --dtype f16");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(testing::ReadBytes(out + "/vocab.txt"), testing::ReadBytes(dir_.Sub("vocab_sp.txt")));
  absl::StatusOr<NeoBertWeights> a = LoadCheckpoint(in, {.load_decoder = true});
  absl::StatusOr<NeoBertWeights> b = LoadCheckpoint(out, {.load_decoder = true});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(b->decoder_weight.has_value());
  EXPECT_EQ(Field(RunNeodb("model info --model " + out).output, "dtype"), "F16");
  // Every value is the F16 rounding of the original: relative error ≤ 2^-11.
  const float* x = a->decoder_weight->data<float>();
  const float* y = b->decoder_weight->data<float>();
  for (int64_t i = 0; i < a->decoder_weight->numel(); ++i) {
    ASSERT_NEAR(y[i], x[i], std::abs(x[i]) * 4.9e-4 + 1e-7) << i;
  }
  EXPECT_THAT(r.output, HasSubstr(b->model_id));
  // --drop-head leaves the MLM head out; a second convert into `out` needs --force.
  r = RunNeodb("model convert --model " + in + " --out " + out + " --drop-head");
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.output, HasSubstr("--force"));
  r = RunNeodb("model convert --model " + in + " --out " + out + " --drop-head --force");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(Field(RunNeodb("model info --model " + out).output, "mlm_head"), "no");
  // A missing input is an error naming it, and leaves nothing behind.
  r = RunNeodb("model convert --model " + dir_.Sub("nope") + " --out " + dir_.Sub("x"));
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.output, HasSubstr("nope"));
  EXPECT_FALSE(fs::exists(dir_.Sub("x")));
}

TEST_F(ModelCliTest, InitLikeCopiesShapeAndTokenizer) {
  const std::string in = dir_.Sub("m"), out = dir_.Sub("like");
  ASSERT_EQ(RunNeodb(InitLoadable(in)).rc, 0);
  CliResult r = RunNeodb("model init --like " + in + " --seed 9 --out " + out);
  ASSERT_EQ(r.rc, 0) << r.output;
  absl::StatusOr<NeoBertWeights> a = LoadCheckpoint(in);
  absl::StatusOr<NeoBertWeights> b = LoadCheckpoint(out);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->config.ToJson("float32"), a->config.ToJson("float32"));
  EXPECT_EQ(b->model_id, RandomWeights(a->config, 9).model_id);
  EXPECT_EQ(testing::ReadBytes(out + "/vocab.txt"), testing::ReadBytes(dir_.Sub("vocab_sp.txt")));
  r = RunNeodb("model init --like " + in + " --vocab " + dir_.Sub("vocab.txt") + " --out " +
               dir_.Sub("both"));
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.output, HasSubstr("not both"));
}

TEST_F(ModelCliTest, RefusesANonEmptyDirectoryUnlessForced) {
  const std::string out = dir_.Sub("m");
  ASSERT_EQ(RunNeodb(Init(out)).rc, 0);
  CliResult again = RunNeodb(Init(out, "", 4));
  EXPECT_NE(again.rc, 0);
  EXPECT_THAT(again.output, HasSubstr("not empty"));
  absl::StatusOr<NeoBertWeights> before = LoadCheckpoint(out);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->model_id, RandomWeights(before->config, 3).model_id);  // untouched

  CliResult forced = RunNeodb(Init(out, "--force --dtype bf16", 4));
  ASSERT_EQ(forced.rc, 0) << forced.output;
  CliResult info = RunNeodb("model info --model " + out);
  ASSERT_EQ(info.rc, 0) << info.output;
  EXPECT_EQ(Field(info.output, "dtype"), "BF16");
  EXPECT_NE(Field(info.output, "model_id"), before->model_id);

  // An existing empty directory is fine.
  fs::create_directory(dir_.Sub("empty"));
  EXPECT_EQ(RunNeodb(Init(dir_.Sub("empty"))).rc, 0);
}

TEST_F(ModelCliTest, SameSeedSameModelId) {
  ASSERT_EQ(RunNeodb(Init(dir_.Sub("a"))).rc, 0);
  ASSERT_EQ(RunNeodb(Init(dir_.Sub("b"))).rc, 0);
  EXPECT_EQ(Field(RunNeodb("model info --model " + dir_.Sub("a")).output, "model_id"),
            Field(RunNeodb("model info --model " + dir_.Sub("b")).output, "model_id"));
}

TEST_F(ModelCliTest, BadArgumentsFail) {
  CliResult preset = RunNeodb("model init --preset huge --vocab " + dir_.Sub("vocab.txt") + " --out " +
                           dir_.Sub("x"));
  EXPECT_NE(preset.rc, 0);
  EXPECT_THAT(preset.output, HasSubstr("huge"));
  CliResult vocab = RunNeodb("model init --preset tiny --vocab " + dir_.Sub("nope.txt") + " --out " +
                          dir_.Sub("x"));
  EXPECT_NE(vocab.rc, 0);
  EXPECT_THAT(vocab.output, HasSubstr("nope.txt"));
  testing::WriteBytes(dir_.Sub("empty.txt"), "");
  CliResult empty =
      RunNeodb("model init --vocab " + dir_.Sub("empty.txt") + " --out " + dir_.Sub("x"));
  EXPECT_NE(empty.rc, 0);
  EXPECT_THAT(empty.output, HasSubstr("empty"));
  CliResult dtype = RunNeodb(Init(dir_.Sub("x"), "--dtype f8"));
  EXPECT_NE(dtype.rc, 0);
  CliResult parent = RunNeodb(Init(dir_.Sub("no/such/parent")));
  EXPECT_NE(parent.rc, 0);
  EXPECT_THAT(parent.output, HasSubstr("does not exist"));
  EXPECT_NE(RunNeodb("model").rc, 0);
  EXPECT_FALSE(fs::exists(dir_.Sub("x")));
}

TEST_F(ModelCliTest, InfoOnAnInvalidCheckpointFails) {
  CliResult missing = RunNeodb("model info --model " + dir_.Sub("absent"));
  EXPECT_NE(missing.rc, 0);
  EXPECT_THAT(missing.output, HasSubstr("neodb: "));
  EXPECT_THAT(missing.output, HasSubstr("model.safetensors"));

  const std::string out = dir_.Sub("m");
  ASSERT_EQ(RunNeodb(Init(out)).rc, 0);
  // Truncate the weights: the offsets now run past the data.
  const std::string bytes = testing::ReadBytes(out + "/model.safetensors");
  testing::WriteBytes(out + "/model.safetensors", bytes.substr(0, bytes.size() / 2));
  CliResult truncated = RunNeodb("model info --model " + out);
  EXPECT_NE(truncated.rc, 0);
  EXPECT_THAT(truncated.output, HasSubstr("past the data section"));
  EXPECT_THAT(truncated.output, Not(HasSubstr("model_id")));

  testing::WriteBytes(out + "/model.safetensors", bytes);
  // BERT loads now (bert_test); an architecture neodb does not run is refused.
  testing::WriteBytes(out + "/config.json", R"({"model_type": "roberta"})");
  CliResult config = RunNeodb("model info --model " + out);
  EXPECT_NE(config.rc, 0);
  EXPECT_THAT(config.output, HasSubstr("model_type"));
}

}  // namespace
}  // namespace neodb::encoder
