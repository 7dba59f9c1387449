// `neodb distill` (issue 45) on tiny models this test makes: the teacher
// cache is written and reused (no re-embedding), a cache of another teacher
// or of other texts is refused, an interrupted embedding resumes to the same
// file byte for byte, an overlong text is cut to fit and counted, and
// distillation alone (no pairs) lowers the loss.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/encoder/cli_runner.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::CliResult;
using testing_util::RunNeodb;

const char* const kWords[] = {"red",  "green", "blue", "apple", "grass", "sky",  "the", "dog",
                              "cat",  "runs",  "fast", "slow",  "tree",  "leaf", "sun", "moon",
                              "rain", "snow",  "big",  "small"};
constexpr int kNumWords = 20;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class DistillCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("neodb_distill_cli_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    std::ofstream vocab(root_ / "vocab.txt");
    vocab << "[PAD]\n";
    for (int i = 1; i < 100; ++i) vocab << "[unused" << i << "]\n";
    vocab << "[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (const char* w : kWords) vocab << w << "\n";
    vocab.close();
    for (const auto& [name, seed] : {std::pair{"student", 1}, {"teacher", 2}, {"teacher2", 3}}) {
      const CliResult init = RunNeodb("model init --preset tiny --seed " + std::to_string(seed) +
                                      " --vocab " + Path("vocab.txt") + " --out " + Path(name));
      ASSERT_EQ(init.rc, 0) << init.output;
    }
    // 31 short texts of 3-6 words (deterministic), blank and blank-looking
    // lines, and one text of 600 words: over the tiny preset's 512 tokens.
    std::ofstream texts(root_ / "texts.txt");
    uint64_t x = 7;
    for (int i = 0; i < 31; ++i) {
      const int n = 3 + i % 4;
      for (int w = 0; w < n; ++w) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        texts << (w ? " " : "") << kWords[(x >> 33) % kNumWords];
      }
      texts << (i % 5 == 0 ? " \r\n" : "\n");
      if (i == 3) texts << "\n   \t\n";
    }
    for (int w = 0; w < 600; ++w) texts << (w ? " " : "") << kWords[w % kNumWords];
    texts << "\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string Path(const std::string& name) const { return (root_ / name).string(); }
  // A distill run of the tiny student; `extra` adds flags.
  CliResult Distill(const std::string& teacher, const std::string& out,
                    const std::string& extra) const {
    return RunNeodb("distill --teacher " + Path(teacher) + " --student " + Path("student") +
                    " --texts " + Path("texts.txt") + " --out " + Path(out) +
                    " --threads 1 --teacher-batch-lines 4 --batch 8 --warmup 1 --lr 1e-3 " + extra);
  }
  fs::path root_;
};

TEST_F(DistillCliTest, CacheIsWrittenThenReusedAndTrainingResumes) {
  const CliResult first =
      Distill("teacher", "out", "--steps 4 --stop-after 2 --checkpoint-every 1");
  ASSERT_EQ(first.rc, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("32 lines, 1 cut to fit"));
  EXPECT_THAT(first.output, HasSubstr("32 texts, 0 reused, 32 embedded now"));
  EXPECT_THAT(first.output, HasSubstr("stopped at step 2"));
  const fs::path cache = root_ / "out.distill";
  const std::string jsonl = ReadFile(cache / "teacher.jsonl");
  const std::vector<std::string> lines = Lines(jsonl);
  ASSERT_EQ(lines.size(), 32u);
  const nlohmann::json id = nlohmann::json::parse(ReadFile(cache / "cache.json"));
  EXPECT_EQ(id["format"], "neodb-distill-cache-1");
  EXPECT_EQ(id["fitted"]["count"], 32);
  EXPECT_EQ(id["fitted"]["cut"], 1);
  EXPECT_EQ(id["texts"]["lines"], 32);
  EXPECT_EQ(id["teacher"]["pooling"], "mean");
  EXPECT_EQ(id["teacher"]["dim"], 64);
  // Each line: the text without its trailing space and '\r', and a 64-d vector.
  const nlohmann::json l0 = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(l0["vector"].size(), 64u);
  EXPECT_NE(l0["text"].get<std::string>().back(), ' ');
  // The 600-word text, cut at a word boundary to 510 words (512 tokens with [CLS]/[SEP]).
  const std::string cut = nlohmann::json::parse(lines[31])["text"];
  EXPECT_EQ(std::count(cut.begin(), cut.end(), ' '), 509);
  EXPECT_NE(cut.back(), ' ');

  const CliResult second = Distill("teacher", "out", "--steps 4 --checkpoint-every 1 --resume");
  ASSERT_EQ(second.rc, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("32 texts, 32 reused, 0 embedded now"));
  EXPECT_THAT(second.output, HasSubstr("resumed at step 2"));
  EXPECT_THAT(second.output, HasSubstr("step 4/4"));
  EXPECT_EQ(ReadFile(cache / "teacher.jsonl"), jsonl) << "the cache was rewritten";
  for (const char* f : {"model.safetensors", "config.json", "loss.csv", "loss.png", "lineage.json"})
    EXPECT_TRUE(fs::exists(root_ / "out" / f)) << f;
  const nlohmann::json lineage = nlohmann::json::parse(ReadFile(root_ / "out" / "lineage.json"));
  EXPECT_EQ(lineage["distill"]["texts"], 32);
  EXPECT_EQ(lineage["distill"]["cut"], 1);
  EXPECT_FALSE(lineage.contains("train_file"));
  EXPECT_TRUE(fs::exists(cache / "teacher.jsonl")) << "the cache outlives the run";
  EXPECT_FALSE(fs::exists(root_ / "out.work"));
}

TEST_F(DistillCliTest, ACacheOfAnotherTeacherOrOtherTextsIsRefused) {
  const CliResult first = Distill("teacher", "out", "--steps 1");
  ASSERT_EQ(first.rc, 0) << first.output;
  const std::string cache = Path("out.distill");
  const CliResult other = Distill("teacher2", "out2", "--steps 1 --cache " + cache);
  EXPECT_EQ(other.rc, 1) << other.output;  // FAILED_PRECONDITION
  EXPECT_THAT(other.output, HasSubstr("was made by another teacher"));
  EXPECT_THAT(other.output, HasSubstr("delete " + cache));
  EXPECT_THAT(other.output, Not(HasSubstr("embedded now")));
  EXPECT_FALSE(fs::exists(root_ / "out2"));

  std::ofstream(root_ / "texts.txt", std::ios::app) << "one more text\n";
  const CliResult texts = Distill("teacher", "out3", "--steps 1 --cache " + cache);
  EXPECT_EQ(texts.rc, 1) << texts.output;
  EXPECT_THAT(texts.output, HasSubstr("was made from other texts"));
  EXPECT_FALSE(fs::exists(root_ / "out3"));
  // The same teacher and texts under another --out: reused as it is.
  fs::resize_file(root_ / "texts.txt", fs::file_size(root_ / "texts.txt") - 14);
  const CliResult same = Distill("teacher", "out4", "--steps 1 --cache " + cache);
  ASSERT_EQ(same.rc, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("32 reused, 0 embedded now"));
}

TEST_F(DistillCliTest, AnInterruptedEmbeddingResumesToTheSameFile) {
  const CliResult whole = Distill("teacher", "out", "--steps 1");
  ASSERT_EQ(whole.rc, 0) << whole.output;
  const std::string expected = ReadFile(root_ / "out.distill" / "teacher.jsonl");
  // As a crash mid-append leaves it: lines 1-9 whole, line 10 torn.
  fs::copy(root_ / "out.distill", root_ / "torn");
  const std::vector<std::string> lines = Lines(expected);
  size_t bytes = 0;
  for (int i = 0; i < 9; ++i) bytes += lines[i].size() + 1;
  fs::resize_file(root_ / "torn" / "teacher.jsonl", bytes + lines[9].size() / 2);
  const CliResult resumed = Distill("teacher", "out2", "--steps 1 --cache " + Path("torn"));
  ASSERT_EQ(resumed.rc, 0) << resumed.output;
  // Lines 1-8 are whole batches of 4 and stay; line 9's batch is embedded again.
  EXPECT_THAT(resumed.output, HasSubstr("32 texts, 8 reused, 24 embedded now"));
  EXPECT_EQ(ReadFile(root_ / "torn" / "teacher.jsonl"), expected);

  // A complete line that is not the text it should be is not trusted.
  std::string bad = expected;
  bad[bad.find("\"text\":\"") + 8] = 'X';
  std::ofstream(root_ / "torn" / "teacher.jsonl", std::ios::binary | std::ios::trunc) << bad;
  const CliResult refused = Distill("teacher", "out3", "--steps 1 --cache " + Path("torn"));
  EXPECT_EQ(refused.rc, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("teacher.jsonl:1: not the teacher vector of text line 1"));
}

TEST_F(DistillCliTest, DistillationAloneLowersTheLoss) {
  const CliResult r = RunNeodb("distill --teacher " + Path("teacher") + " --student " +
                               Path("student") + " --texts " + Path("texts.txt") + " --out " +
                               Path("out") + " --threads 1 --steps 40 --batch 32 --warmup 4 " +
                               "--lr 2e-3");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("0 training pairs"));
  EXPECT_THAT(r.output,
              HasSubstr("similarity structure + 1 × (1 - cos(student, teacher)), both 64-d"));
  // Every step's batch is all 32 texts, so the losses of steps compare.
  const std::vector<std::string> csv = Lines(ReadFile(root_ / "out" / "loss.csv"));
  ASSERT_EQ(csv.size(), 41u);
  const double first = std::stod(csv[1].substr(csv[1].find(',') + 1));
  const double last = std::stod(csv[40].substr(csv[40].find(',') + 1));
  EXPECT_GT(first, 0.1);
  EXPECT_LT(last, 0.5 * first) << "first " << first;
}

TEST_F(DistillCliTest, FinetuneTrainsOnADistillFileAloneAndNeedsOneOfTheTwo) {
  const CliResult d = Distill("teacher", "out", "--steps 1");
  ASSERT_EQ(d.rc, 0) << d.output;
  const std::string base = "finetune --model " + Path("student") + " --steps 2 --warmup 1 ";
  const CliResult alone = RunNeodb(base + "--distill " + Path("out.distill/teacher.jsonl") +
                                   " --distill-batch 8 --out " + Path("ft"));
  ASSERT_EQ(alone.rc, 0) << alone.output;
  EXPECT_THAT(alone.output, HasSubstr("step 2/2"));
  const CliResult neither = RunNeodb(base + "--out " + Path("ft2"));
  EXPECT_EQ(neither.rc, 2) << neither.output;
  EXPECT_THAT(neither.output, HasSubstr("--train is required (or --distill"));
}

TEST_F(DistillCliTest, BadInputIsRefusedWithAMessage) {
  fs::create_directories(root_ / "exists");
  const CliResult exists = Distill("teacher", "exists", "--steps 1");
  EXPECT_EQ(exists.rc, 1) << exists.output;
  EXPECT_THAT(exists.output, HasSubstr("already exists"));
  const CliResult batch = RunNeodb("distill --teacher " + Path("teacher") + " --student " +
                                   Path("student") + " --texts " + Path("texts.txt") + " --out " +
                                   Path("out") + " --threads 1 --batch 64");
  EXPECT_EQ(batch.rc, 2) << batch.output;
  EXPECT_THAT(batch.output, HasSubstr("--batch 64 is larger than the 32 texts"));
  std::ofstream(root_ / "bad.txt", std::ios::binary) << "fine\nbad \xff byte\n";
  const CliResult utf8 = RunNeodb("distill --teacher " + Path("teacher") + " --student " +
                                  Path("student") + " --texts " + Path("bad.txt") + " --out " +
                                  Path("out5"));
  EXPECT_EQ(utf8.rc, 2) << utf8.output;
  EXPECT_THAT(utf8.output, HasSubstr("bad.txt:2: not valid UTF-8"));
  EXPECT_FALSE(fs::exists(root_ / "out5.distill" / "teacher.jsonl"));
}

}  // namespace
}  // namespace neodb::encoder::train
