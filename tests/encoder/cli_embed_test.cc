// Runs the neodb binary: `model init` a tiny checkpoint, then `tokenize` and
// `embed` over stdin, and checks the output against the Encoder in-process.
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "encoder/cuda/cuda_backend.h"
#include "encoder/encoder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

namespace fs = std::filesystem;

std::string Neodb() { return NEODB_CLI_PATH; }

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "neodb-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = new fs::path(tmpl);
    std::ofstream vocab(*dir_ / "vocab.txt");
    vocab << "[PAD]\n";
    for (int i = 1; i < 100; ++i) vocab << "[unused" << i << "]\n";
    vocab << "[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nfoo\nbar\n";
    for (int i = 0; i < 200; ++i) vocab << "w" << i << "\n";
    vocab.close();
    const std::string cmd = Neodb() + " model init --preset tiny --seed 3 --vocab " +
                            (*dir_ / "vocab.txt").string() + " --out " +
                            (*dir_ / "model").string() + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  // Runs neodb with `args`, stdin = `input`; returns the exit code.
  int Run(const std::string& args, const std::string& input, std::string* out, std::string* err) {
    {
      std::ofstream in(*dir_ / "stdin", std::ios::binary);
      in.write(input.data(), static_cast<std::streamsize>(input.size()));
    }
    const std::string cmd = Neodb() + " " + args + " < " + (*dir_ / "stdin").string() + " > " +
                            (*dir_ / "stdout").string() + " 2> " + (*dir_ / "stderr").string();
    const int status = std::system(cmd.c_str());
    *out = ReadAll(*dir_ / "stdout");
    *err = ReadAll(*dir_ / "stderr");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string model() const { return (*dir_ / "model").string(); }
  static fs::path* dir_;
};
fs::path* CliTest::dir_ = nullptr;

TEST_F(CliTest, TokenizePrintsFramedIdsPerLine) {
  std::string out, err;
  ASSERT_EQ(Run("tokenize --model " + model(), "hello world\n\nfoo\r bar", &out, &err), 0) << err;
  const auto lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines[0]), nlohmann::json({101, 104, 105, 102}));
  EXPECT_EQ(nlohmann::json::parse(lines[1]), nlohmann::json({101, 102}));
  EXPECT_EQ(nlohmann::json::parse(lines[2]), nlohmann::json({101, 106, 107, 102}));  // \r is text
}

TEST_F(CliTest, EmbedMatchesTheEncoderInOrder) {
  // A NUL byte and a \r are text, not line ends; lines of mixed lengths are
  // batched (--batch-lines 2) and printed in input order.
  const std::string nul_line("foo\0bar", 7);
  std::vector<std::string> texts = {"hello world", "w1 w2 w3 w4 w5 w6 w7", nul_line, "",
                                    "bar\rfoo"};
  std::string input;
  for (const auto& t : texts) input += t + "\n";
  std::string out, err;
  ASSERT_EQ(Run("embed --model " + model() + " --pooling cls --normalize --batch-lines 2 " +
                    "--batch-tokens 8",
                input, &out, &err),
            0)
      << err;
  const auto lines = Lines(out);
  ASSERT_EQ(lines.size(), texts.size());
  auto enc = Encoder::Open(model());
  ASSERT_TRUE(enc.ok()) << enc.status();
  EmbedOptions opt;
  opt.pooling = Pooling::kCls;
  opt.normalize = true;
  auto want = (*enc)->Embed(texts, opt);
  ASSERT_TRUE(want.ok()) << want.status();
  // Numbers are printed short (≤ 9 significant digits) yet read back exactly.
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto j = nlohmann::json::parse(lines[i]);
    for (const auto& v : j["embedding"]) {
      const std::string text = v.dump();
      const float f = v.get<float>();
      std::string digits;
      for (char ch : text.substr(0, text.find_first_of("eE"))) {
        if (ch >= '0' && ch <= '9') digits += ch;
      }
      digits.erase(0, digits.find_first_not_of('0'));
      ASSERT_LE(digits.size(), 9u) << text;
      ASSERT_EQ(std::strtof(text.c_str(), nullptr), f) << text;
    }
    const auto vec = j["embedding"].get<std::vector<float>>();
    EXPECT_EQ(j["tokens"].get<std::vector<int32_t>>(), (*want)[i].tokens) << "line " << i + 1;
    ASSERT_EQ(vec.size(), (*want)[i].vector.size());
    for (size_t c = 0; c < vec.size(); ++c) {
      // Printed to round-trip: batching differs, so allow float noise only.
      ASSERT_NEAR(vec[c], (*want)[i].vector[c], 1e-5) << "line " << i + 1;
    }
  }
}

TEST_F(CliTest, TooLongLineFailsNamingTheLineUnlessChunked) {
  std::string long_line;
  for (int i = 0; i < 600; ++i) {
    long_line += 'w';
    long_line += std::to_string(i % 200);
    long_line += ' ';
  }
  const std::string input = "hello\nworld\n" + long_line + "\nfoo\n";
  std::string out, err;
  EXPECT_NE(Run("embed --model " + model(), input, &out, &err), 0);
  EXPECT_NE(err.find("line 3"), std::string::npos) << err;
  EXPECT_NE(err.find("max_length 512"), std::string::npos) << err;
  ASSERT_EQ(Run("embed --model " + model() + " --chunk --pooling mean", input, &out, &err), 0)
      << err;
  EXPECT_EQ(Lines(out).size(), 4u);
}

// No --model: the default model, here pointed at the tiny test model with
// NEODB_DEFAULT_MODEL (the shipped one is tested by default_model_test).
TEST_F(CliTest, WithoutModelTheDefaultModelIsUsed) {
  std::string explicit_out, out, err;
  ASSERT_EQ(Run("embed --normalize --model " + model(), "hello world\n", &explicit_out, &err), 0)
      << err;
  ASSERT_EQ(setenv("NEODB_DEFAULT_MODEL", model().c_str(), 1), 0);
  EXPECT_EQ(Run("embed --normalize", "hello world\n", &out, &err), 0) << err;
  EXPECT_EQ(out, explicit_out);
  EXPECT_EQ(Run("tokenize", "hello world\n", &out, &err), 0) << err;
  ASSERT_EQ(setenv("NEODB_DEFAULT_MODEL", (model() + "/missing").c_str(), 1), 0);
  EXPECT_NE(Run("embed", "hello world\n", &out, &err), 0);
  EXPECT_NE(err.find("NEODB_DEFAULT_MODEL"), std::string::npos) << err;
  unsetenv("NEODB_DEFAULT_MODEL");
}

TEST_F(CliTest, DeviceAutoRunsWhereItSaysAndCudaWithoutADeviceFails) {
  std::string cpu_out, out, err;
  ASSERT_EQ(Run("embed --device cpu --model " + model(), "hello world\nfoo\n", &cpu_out, &err), 0)
      << err;
  ASSERT_EQ(Run("embed --device auto --model " + model(), "hello world\nfoo\n", &out, &err), 0)
      << err;
  const bool gpu = CudaDeviceCount().ok();
  EXPECT_NE(err.find(gpu ? "--device auto chose cuda:0" : "--device auto chose cpu"),
            std::string::npos)
      << err;
  if (!gpu) EXPECT_EQ(out, cpu_out);  // the same CPU path, bit for bit
  if (gpu) GTEST_SKIP() << "a CUDA device is visible: --device cuda would run";
  for (const std::string device : {"cuda", "cuda:2"}) {
    EXPECT_EQ(Run("embed --device " + device + " --model " + model(), "x\n", &out, &err), 1);
    EXPECT_NE(err.find("asks for CUDA"), std::string::npos) << err;
    EXPECT_NE(err.find("no CUDA device"), std::string::npos) << err;
    EXPECT_EQ(out, "");  // nothing embedded on the CPU instead
  }
}

TEST_F(CliTest, ABadDeviceIsAUsageError) {
  std::string out, err;
  EXPECT_EQ(Run("embed --device gpu --model " + model(), "x\n", &out, &err), 2);
  EXPECT_NE(err.find("device must be cpu, cuda, cuda:N or auto, not 'gpu'"), std::string::npos)
      << err;
  EXPECT_EQ(out, "");
}

TEST_F(CliTest, BadFlagsAreErrors) {
  std::string out, err;
  EXPECT_NE(Run("embed --model " + model() + " --pooling max", "x\n", &out, &err), 0);
  EXPECT_NE(err.find("--pooling"), std::string::npos) << err;
  EXPECT_NE(Run("embed --model /nonexistent", "x\n", &out, &err), 0);
}

}  // namespace
}  // namespace neodb::encoder
