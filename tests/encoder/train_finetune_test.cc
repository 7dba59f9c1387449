// The finetune / eval jobs end to end on a tiny checkpoint written to disk:
// the output directory is complete and loadable, eval improves, failures
// leave nothing behind, and an interrupted run resumed with --resume
// produces exactly the weights of an uninterrupted one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "encoder/checkpoint/weights.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/finetune.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kConcepts = 16;

class FinetuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("neodb_finetune_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "model");
    // Vocabulary: BERT's special ids, concept words for queries (qwK) and
    // documents (dwK), a few fillers.
    std::vector<std::string> vocab = {"[PAD]"};
    for (int i = 1; i < 100; ++i) vocab.push_back("[unused" + std::to_string(i) + "]");
    for (const char* s : {"[UNK]", "[CLS]", "[SEP]", "[MASK]"}) vocab.push_back(s);
    for (int k = 0; k < kConcepts; ++k) vocab.push_back("qw" + std::to_string(k));
    for (int k = 0; k < kConcepts; ++k) vocab.push_back("dw" + std::to_string(k));
    for (const char* s : {"the", "of", "and", "to"}) vocab.push_back(s);
    std::ofstream(root_ / "model" / "vocab.txt") << [&] {
      std::string all;
      for (const auto& v : vocab) all += v + "\n";
      return all;
    }();
    NeoBertConfig c;
    c.hidden_size = 32;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 2;
    c.intermediate_size = 48;
    c.vocab_size = static_cast<int64_t>(vocab.size());
    c.max_length = 16;
    ASSERT_TRUE(
        SaveCheckpoint(RandomWeights(c, 3, /*with_decoder=*/true), (root_ / "model").string())
            .ok());
    WritePairs("train.jsonl", 1, true, 2);
    WritePairs("eval.jsonl", 2, false, 1);
  }
  void TearDown() override {
    std::fclose(quiet_);
    fs::remove_all(root_);
  }

  // `variants` noisy copies of each concept pair; fillers from `seed`.
  void WritePairs(const std::string& name, unsigned seed, bool negatives, int variants) {
    const char* fillers[] = {"the", "of", "and", "to"};
    unsigned state = seed;
    auto filler = [&] {
      state = state * 1103515245u + 12345u;
      return std::string(fillers[(state >> 16) % 4]);
    };
    std::ofstream out(root_ / name);
    for (int v = 0; v < variants; ++v) {
      for (int k = 0; k < kConcepts; ++k) {
        nlohmann::json j = {{"query", "qw" + std::to_string(k) + " " + filler() + " " + filler()},
                            {"positive", filler() + " dw" + std::to_string(k) + " " + filler()}};
        if (negatives)
          j["negatives"] = {"dw" + std::to_string((k + 1) % kConcepts) + " " + filler()};
        out << j.dump() << "\n";
      }
    }
  }

  FinetuneOptions Options(const std::string& out) {
    FinetuneOptions o;
    o.model_dir = (root_ / "model").string();
    o.train_file = (root_ / "train.jsonl").string();
    o.eval_file = (root_ / "eval.jsonl").string();
    o.out_dir = (root_ / out).string();
    o.trainer.steps = 150;
    o.trainer.batch_size = 8;
    o.trainer.lr = 3e-3;
    o.trainer.warmup = 10;
    o.trainer.chunk_size = 6;
    o.trainer.seed = 5;
    return o;
  }

  // Runs the job with its progress output captured into *text.
  absl::Status RunLogged(const FinetuneOptions& o, std::string* text) {
    std::FILE* log = std::tmpfile();
    const absl::Status s = RunFinetune(o, log);
    std::rewind(log);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), log)) > 0;) text->append(buf, n);
    std::fclose(log);
    return s;
  }

  std::vector<std::string> Entries() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
  std::FILE* quiet_ = std::fopen("/dev/null", "w");  // progress output of runs not inspected
};

TEST_F(FinetuneTest, WritesACompleteLoadableDirectoryAndImprovesEval) {
  const FinetuneOptions o = Options("out");
  std::string text;
  ASSERT_TRUE(RunLogged(o, &text).ok());
  EXPECT_THAT(text, HasSubstr("eval before: R@1"));
  EXPECT_THAT(text, HasSubstr("eval after:  R@1"));
  EXPECT_THAT(text, HasSubstr("step 150/150"));
  EXPECT_THAT(text, HasSubstr("tok/s"));
  for (const char* f :
       {"config.json", "model.safetensors", "vocab.txt", "loss.csv", "loss.png", "finetune.json"}) {
    EXPECT_TRUE(fs::exists(root_ / "out" / f)) << f;
  }
  // Nothing else left beside the inputs: no .work, no .tmp.
  EXPECT_EQ(Entries(), (std::vector<std::string>{"eval.jsonl", "model", "out", "train.jsonl"}));
  std::ifstream report_in(root_ / "out" / "finetune.json");
  const nlohmann::json report = nlohmann::json::parse(report_in);
  const double before = report["eval_before"]["ndcg@10"], after = report["eval_after"]["ndcg@10"];
  std::printf("nDCG@10 %.3f -> %.3f, R@1 %.3f -> %.3f\n", before, after,
              report["eval_before"]["recall@1"].get<double>(),
              report["eval_after"]["recall@1"].get<double>());
  EXPECT_GT(after, before + 0.2);
  std::ifstream csv(root_ / "out" / "loss.csv");
  int lines = 0;
  for (std::string l; std::getline(csv, l);) ++lines;
  EXPECT_EQ(lines, 151);

  auto input = LoadCheckpoint((root_ / "model").string(), {.load_decoder = true});
  auto output = LoadCheckpoint((root_ / "out").string(), {.load_decoder = true});
  ASSERT_TRUE(input.ok() && output.ok()) << output.status();
  EXPECT_NE(input->model_id, output->model_id);
  ASSERT_TRUE(output->decoder_weight.has_value());  // the MLM head is carried over
  EXPECT_TRUE(LoadTokenizer((root_ / "out").string()).ok());
  // neodb eval on the output reproduces the "after" metrics.
  EvalOptions e;
  e.model_dir = (root_ / "out").string();
  e.pairs_file = o.eval_file;
  auto metrics = RunEval(e);
  ASSERT_TRUE(metrics.ok());
  EXPECT_NEAR(metrics->ndcg_at_10, after, 1e-9);
}

TEST_F(FinetuneTest, AuxiliaryMlmTrainsTheHeadAndWritesIt) {
  {
    std::ofstream corpus(root_ / "corpus.txt");
    for (int i = 0; i < 200; ++i) {
      corpus << "qw" << i % kConcepts << " the dw" << i % kConcepts << " of and\n";
    }
  }
  FinetuneOptions o = Options("out");
  o.trainer.steps = 20;
  o.eval_file.clear();
  o.mlm_corpus = (root_ / "corpus.txt").string();
  o.mlm.seq_len = 16;
  o.mlm.batch_tokens = 64;
  o.mlm.micro_batch_tokens = 64;
  o.trainer.mlm_weight = 0.5;
  std::string text;
  ASSERT_TRUE(RunLogged(o, &text).ok());
  EXPECT_THAT(text, HasSubstr("auxiliary MLM: "));
  EXPECT_THAT(text, HasSubstr("weight 0.5"));
  EXPECT_THAT(text, HasSubstr("  mlm "));

  auto input = LoadCheckpoint((root_ / "model").string(), {.load_decoder = true});
  auto output = LoadCheckpoint((root_ / "out").string(), {.load_decoder = true});
  ASSERT_TRUE(input.ok() && output.ok()) << output.status();
  ASSERT_TRUE(output->decoder_weight.has_value() && output->decoder_bias.has_value());
  const Tensor& w_in = *input->decoder_weight;
  const Tensor& w_out = *output->decoder_weight;
  ASSERT_EQ(w_in.numel(), w_out.numel());
  int64_t changed = 0;
  for (int64_t i = 0; i < w_in.numel(); ++i)
    changed += w_in.data<float>()[i] != w_out.data<float>()[i];
  EXPECT_GT(changed, w_in.numel() / 2) << "the head was trained, not carried over";
  std::ifstream report_in(root_ / "out" / "finetune.json");
  const nlohmann::json report = nlohmann::json::parse(report_in);
  EXPECT_EQ(report["settings"]["mlm"]["weight"], 0.5);
  std::ifstream csv(root_ / "out" / "loss.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_THAT(header, HasSubstr("mlm_loss"));

  // A checkpoint without an MLM head cannot train one on the side.
  NeoBertWeights no_head = *input;
  no_head.decoder_weight.reset();
  no_head.decoder_bias.reset();
  fs::create_directories(root_ / "nohead");
  ASSERT_TRUE(SaveCheckpoint(no_head, (root_ / "nohead").string()).ok());
  fs::copy_file(root_ / "model" / "vocab.txt", root_ / "nohead" / "vocab.txt");
  FinetuneOptions n = o;
  n.model_dir = (root_ / "nohead").string();
  n.out_dir = (root_ / "out2").string();
  const absl::Status s = RunFinetune(n, quiet_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("needs a checkpoint with an MLM head"));
  EXPECT_FALSE(fs::exists(root_ / "out2"));
}

TEST_F(FinetuneTest, BadInputFailsAndLeavesNothingBehind) {
  {
    std::ofstream out(root_ / "train.jsonl", std::ios::app);
    out << "{\"query\": \"qw1\", \"positive\": 7}\n";
  }
  const absl::Status s = RunFinetune(Options("out"), quiet_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("train.jsonl:33:"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("\"positive\" must be a string"));
  EXPECT_EQ(Entries(), (std::vector<std::string>{"eval.jsonl", "model", "train.jsonl"}));
}

TEST_F(FinetuneTest, TooLongTextNamesTheLine) {
  FinetuneOptions o = Options("out");
  o.max_length = 4;  // "[CLS] qwK filler filler [SEP]" is 5
  const absl::Status s = RunFinetune(o, quiet_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("train.jsonl:1: query is 5 tokens"));
  o.max_length = 17;  // over the model's 16
  EXPECT_THAT(std::string(RunFinetune(o, quiet_).message()), HasSubstr("max_length 16"));
}

TEST_F(FinetuneTest, KeepsTheInputDtypeAndWritesLineage) {
  // Re-store the input model in F16: the output must come back F16.
  auto weights = LoadCheckpoint((root_ / "model").string(), {.load_decoder = true});
  ASSERT_TRUE(weights.ok());
  ASSERT_TRUE(SaveCheckpoint(*weights, (root_ / "model").string(), {.dtype = DType::kF16}).ok());
  auto input = LoadCheckpoint((root_ / "model").string());
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(*CheckpointStorageDType((root_ / "model").string()), DType::kF16);
  FinetuneOptions o = Options("out");
  o.trainer.steps = 3;
  o.eval_file.clear();
  o.lineage_extra = {{"negatives", "mined:1"}, {"adapt", {{"collection", "c"}}}};
  ASSERT_TRUE(RunFinetune(o, quiet_).ok());
  EXPECT_EQ(*CheckpointStorageDType((root_ / "out").string()), DType::kF16);
  // F16 is 2 bytes a value: the output file is about as large as the input's.
  EXPECT_NEAR(static_cast<double>(fs::file_size(root_ / "out" / "model.safetensors")),
              static_cast<double>(fs::file_size(root_ / "model" / "model.safetensors")), 4096);
  auto output = LoadCheckpoint((root_ / "out").string());
  ASSERT_TRUE(output.ok());
  std::ifstream in(root_ / "out" / "lineage.json");
  const nlohmann::json lineage = nlohmann::json::parse(in);
  EXPECT_EQ(lineage["model_id"], output->model_id);
  EXPECT_EQ(lineage["parent"]["model_id"], input->model_id);
  EXPECT_EQ(lineage["parent"]["dir"], o.model_dir);
  EXPECT_EQ(lineage["train_hash"], *FileHash(o.train_file));
  EXPECT_EQ(lineage["steps"], 3);
  EXPECT_EQ(lineage["dtype"], "float16");
  EXPECT_EQ(lineage["given_negatives"], 2 * kConcepts);  // one per training line
  EXPECT_EQ(lineage["negatives"], "mined:1");             // lineage_extra wins
  EXPECT_EQ(lineage["adapt"]["collection"], "c");
  // Another file, another hash.
  EXPECT_NE(*FileHash(o.train_file), *FileHash((root_ / "eval.jsonl").string()));
  EXPECT_EQ(FileHash((root_ / "none").string()).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FinetuneTest, ExistingOutputIsRefused) {
  fs::create_directories(root_ / "out");
  const absl::Status s = RunFinetune(Options("out"), quiet_);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(FinetuneTest, InterruptedRunResumesToTheSameWeights) {
  FinetuneOptions a = Options("a");
  a.trainer.steps = 20;
  a.eval_file.clear();
  ASSERT_TRUE(RunFinetune(a, quiet_).ok());

  FinetuneOptions b = Options("b");
  b.trainer.steps = 20;
  b.eval_file.clear();
  b.trainer.checkpoint_every = 5;
  b.trainer.stop_after = 12;
  ASSERT_TRUE(RunFinetune(b, quiet_).ok());
  EXPECT_FALSE(fs::exists(root_ / "b"));  // interrupted: no output yet
  EXPECT_TRUE(fs::exists(root_ / "b.work" / "checkpoint" / "state.json"));
  // Without --resume the leftover checkpoint is not silently overwritten.
  b.trainer.stop_after = 0;
  EXPECT_EQ(RunFinetune(b, quiet_).code(), absl::StatusCode::kFailedPrecondition);
  b.trainer.resume = true;
  ASSERT_TRUE(RunFinetune(b, quiet_).ok());
  EXPECT_FALSE(fs::exists(root_ / "b.work"));

  auto wa = LoadCheckpoint((root_ / "a").string());
  auto wb = LoadCheckpoint((root_ / "b").string());
  ASSERT_TRUE(wa.ok() && wb.ok());
  EXPECT_EQ(wa->model_id, wb->model_id);  // a hash of every weight value
}

}  // namespace
}  // namespace neodb::encoder::train
