// The BERT training path end to end: the training forward computes what the
// inference model (models/bert.cc via LoadModel) computes, on a tiny random
// checkpoint written to disk and on the real all-MiniLM-L6-v2
// ($NEODB_MINILM_DIR; skipped with the reason when unset); a save → load →
// save round trip is bit-identical; `finetune` on a BERT trains (the loss
// falls), and its output loads as BERT with the source's sentence-transformers
// files and embeds differently from the input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/safetensors_writer.h"
#include "encoder/model.h"
#include "encoder/train/bert_checkpoint_io.h"
#include "encoder/train/distill_job.h"
#include "encoder/train/finetune.h"
#include "encoder/train/train_model.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;

constexpr int kConcepts = 12;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The smallest cosine between row b of a and of b, over every row.
double MinCosine(const float* a, const float* b, int64_t rows, int64_t dim) {
  double worst = 1;
  for (int64_t r = 0; r < rows; ++r) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t c = 0; c < dim; ++c) {
      ab += static_cast<double>(a[r * dim + c]) * b[r * dim + c];
      aa += static_cast<double>(a[r * dim + c]) * a[r * dim + c];
      bb += static_cast<double>(b[r * dim + c]) * b[r * dim + c];
    }
    worst = std::min(worst, ab / std::sqrt(aa * bb));
  }
  return worst;
}

// Training forward (F32) vs the inference backend (F32) on `batch`: the
// smallest cosine over its sequences.
double TrainVsInference(const std::string& dir, const PackedBatch& batch, Pooling pooling) {
  absl::StatusOr<TrainParams<float>> params = LoadBertTrainParams(dir);
  EXPECT_TRUE(params.ok()) << params.status();
  if (!params.ok()) return 0;
  const TrainModel<float> model(params->layout, pooling);
  const int64_t c = params->layout.hidden_size();
  std::vector<float> trained(batch.batch_size() * c);
  model.Forward(params->values.data(), batch, 0, nullptr, pooling, trained.data(), nullptr);
  absl::StatusOr<std::shared_ptr<const Model>> loaded = LoadModel(dir);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return 0;
  EXPECT_EQ((*loaded)->architecture(), Architecture::kBert);
  auto backend = (*loaded)->MakeBackend(BackendOptions{}, Precision::kF32);
  EXPECT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<Tensor> served = (*backend)->Pool(batch, pooling);
  EXPECT_TRUE(served.ok()) << served.status();
  if (!served.ok()) return 0;
  return MinCosine(trained.data(), served->data<float>(), batch.batch_size(), c);
}

class BertTrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("neodb_train_bert_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "spec" / "1_Pooling");
    // Vocabulary: BERT's special ids (101 [CLS], 102 [SEP]), concept words
    // for queries (qwK) and documents (dwK), fillers.
    std::vector<std::string> vocab = {"[PAD]"};
    for (int i = 1; i < 100; ++i) vocab.push_back("[unused" + std::to_string(i) + "]");
    for (const char* s : {"[UNK]", "[CLS]", "[SEP]", "[MASK]"}) vocab.push_back(s);
    for (int k = 0; k < kConcepts; ++k) vocab.push_back("qw" + std::to_string(k));
    for (int k = 0; k < kConcepts; ++k) vocab.push_back("dw" + std::to_string(k));
    for (const char* s : {"the", "of", "and", "to"}) vocab.push_back(s);
    std::string all;
    for (const auto& v : vocab) all += v + "\n";
    std::ofstream(root_ / "spec" / "vocab.txt") << all;
    config_.hidden_size = 32;
    config_.num_hidden_layers = 2;
    config_.num_attention_heads = 4;
    config_.intermediate_size = 64;
    config_.vocab_size = static_cast<int64_t>(vocab.size());
    config_.max_position_embeddings = 24;
    config_.layer_norm_eps = 1e-12;
    std::ofstream(root_ / "spec" / "config.json") << config_.ToJson();
    std::ofstream(root_ / "spec" / "modules.json")
        << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},)"
        << R"({"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])";
    std::ofstream(root_ / "spec" / "sentence_bert_config.json") << R"({"max_seq_length": 16})";
    std::ofstream(root_ / "spec" / "neodb_model.json")
        << R"({"hybrid": {"fusion": "weighted", "alpha": 0.5}})";
    SetPooling(Pooling::kCls);
    const TrainParams<float> params = RandomParams<float>(ParamLayout(config_), 11, 0.2, 0.2);
    fs::create_directories(root_ / "model");
    ASSERT_TRUE(SaveBertTrainParams(params, (root_ / "spec").string(), (root_ / "model").string(),
                                    DType::kF32)
                    .ok());
    // As if an adapt had applied this model (its --rollback record).
    std::ofstream(root_ / "model" / "adapt.json") << R"({"collection": "c"})";
    // As if imported from a package (its provenance names these weights).
    std::ofstream(root_ / "model" / "neodb_import.json") << R"({"weights_sha256": "0"})";
  }
  void TearDown() override {
    std::fclose(quiet_);
    fs::remove_all(root_);
  }

  // Rewrites the spec's and the model's pooling module.
  void SetPooling(Pooling p) {
    const bool cls = p == Pooling::kCls;
    for (const char* d : {"spec", "model"}) {
      if (!fs::exists(root_ / d / "1_Pooling") && d != std::string("spec")) continue;
      std::ofstream(root_ / d / "1_Pooling" / "config.json")
          << nlohmann::json({{"word_embedding_dimension", config_.hidden_size},
                             {"pooling_mode_cls_token", cls},
                             {"pooling_mode_mean_tokens", !cls}})
                 .dump();
    }
  }

  void WritePairs(const std::string& name) {
    const char* fillers[] = {"the", "of", "and", "to"};
    unsigned state = 1;
    auto filler = [&] {
      state = state * 1103515245u + 12345u;
      return std::string(fillers[(state >> 16) % 4]);
    };
    std::ofstream out(root_ / name);
    for (int v = 0; v < 2; ++v) {
      for (int k = 0; k < kConcepts; ++k) {
        out << nlohmann::json({{"query", "qw" + std::to_string(k) + " " + filler()},
                               {"positive", filler() + " dw" + std::to_string(k)}})
                   .dump()
            << "\n";
      }
    }
  }

  BertConfig config_;
  fs::path root_;
  std::FILE* quiet_ = std::fopen("/dev/null", "w");
};

PackedBatch TinyBatch() {
  PackedBatch batch;
  AppendSequence(&batch, {101, 104, 110, 120, 102});
  AppendSequence(&batch, {101, 102});
  AppendSequence(&batch, {101, 105, 106, 107, 108, 109, 111, 112, 113, 102});
  return batch;
}

TEST_F(BertTrainTest, ForwardEqualsInferenceModelOnATinyCheckpoint) {
  for (Pooling p : {Pooling::kMean, Pooling::kCls}) {
    const double cos = TrainVsInference((root_ / "model").string(), TinyBatch(), p);
    std::printf("tiny BERT, %s pooling: 1 - min cosine training vs inference %.3g\n",
                p == Pooling::kCls ? "CLS" : "mean", 1 - cos);
    EXPECT_GE(cos, 1 - 1e-5);
  }
}

TEST_F(BertTrainTest, SaveLoadSaveIsBitIdentical) {
  auto a = LoadBertTrainParams((root_ / "model").string());
  ASSERT_TRUE(a.ok()) << a.status();
  fs::create_directories(root_ / "once");
  ASSERT_TRUE(SaveBertTrainParams(*a, (root_ / "model").string(), (root_ / "once").string(),
                                  DType::kF32)
                  .ok());
  auto b = LoadBertTrainParams((root_ / "once").string());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->values, b->values);
  fs::create_directories(root_ / "twice");
  ASSERT_TRUE(SaveBertTrainParams(*b, (root_ / "once").string(), (root_ / "twice").string(),
                                  DType::kF32)
                  .ok());
  EXPECT_EQ(ReadBytes(root_ / "model" / "model.safetensors"),
            ReadBytes(root_ / "once" / "model.safetensors"));
  EXPECT_EQ(ReadBytes(root_ / "once" / "model.safetensors"),
            ReadBytes(root_ / "twice" / "model.safetensors"));
  // The source's other files came along, weights excluded.
  for (const char* f : {"config.json", "vocab.txt", "modules.json", "sentence_bert_config.json",
                        "1_Pooling/config.json"}) {
    EXPECT_EQ(ReadBytes(root_ / "model" / f), ReadBytes(root_ / "twice" / f)) << f;
  }
  // F16 storage: the second save reproduces the first exactly too.
  fs::create_directories(root_ / "h1");
  fs::create_directories(root_ / "h2");
  ASSERT_TRUE(SaveBertTrainParams(*a, (root_ / "model").string(), (root_ / "h1").string(),
                                  DType::kF16)
                  .ok());
  auto h = LoadBertTrainParams((root_ / "h1").string());
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE(SaveBertTrainParams(*h, (root_ / "h1").string(), (root_ / "h2").string(),
                                  DType::kF16)
                  .ok());
  EXPECT_EQ(ReadBytes(root_ / "h1" / "model.safetensors"),
            ReadBytes(root_ / "h2" / "model.safetensors"));
}

// A *ForXxx checkpoint ("bert." prefix, a pooler and an MLM head beside the
// encoder, F16) loads into the same parameters; the save drops the prefix and
// the parts training never touched.
TEST_F(BertTrainTest, LoadsAPrefixedCheckpointWithHeads) {
  auto a = LoadBertTrainParams((root_ / "model").string());
  ASSERT_TRUE(a.ok()) << a.status();
  fs::create_directories(root_ / "prefixed");
  fs::copy_file(root_ / "model" / "config.json", root_ / "prefixed" / "config.json");
  std::vector<NamedTensor> tensors;
  for (const ParamEntry& e : a->layout.entries()) {
    Tensor t = Tensor::Empty(e.shape, DType::kF32);
    std::copy(a->at(e), a->at(e) + e.numel, t.data<float>());
    tensors.push_back({"bert." + e.name, std::move(t)});
  }
  Tensor head = Tensor::Empty({config_.vocab_size}, DType::kF32);
  std::fill(head.data<float>(), head.data<float>() + head.numel(), 0.5f);
  tensors.push_back({"cls.predictions.bias", head});
  Tensor pooler = Tensor::Empty({config_.hidden_size, config_.hidden_size}, DType::kF32);
  std::fill(pooler.data<float>(), pooler.data<float>() + pooler.numel(), 0.25f);
  tensors.push_back({"bert.pooler.dense.weight", pooler});
  ASSERT_TRUE(WriteSafetensors((root_ / "prefixed" / "model.safetensors").string(),
                               std::move(tensors), DType::kF16)
                  .ok());
  auto b = LoadBertTrainParams((root_ / "prefixed").string());
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t i = 0; i < a->values.size(); ++i) {  // F16-rounded
    ASSERT_NEAR(b->values[i], a->values[i], 1e-3 * (1 + std::fabs(a->values[i]))) << i;
  }
  fs::create_directories(root_ / "saved");
  ASSERT_TRUE(SaveBertTrainParams(*b, (root_ / "prefixed").string(), (root_ / "saved").string(),
                                  DType::kF16)
                  .ok());
  auto file = SafetensorsFile::Open((root_ / "saved" / "model.safetensors").string());
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->tensors().size(), a->layout.entries().size());
  for (const auto& t : file->tensors()) {
    EXPECT_NE(t.name.rfind("bert.", 0), 0u) << t.name;
    EXPECT_NE(t.name.rfind("cls.", 0), 0u) << t.name;
    EXPECT_EQ(t.name.find("pooler"), std::string::npos) << t.name;
  }
  EXPECT_EQ(file->Find("encoder.layer.0.attention.self.query.weight") != nullptr, true);
  auto loaded = LoadModel((root_ / "saved").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
}

TEST_F(BertTrainTest, FinetuneTrainsABertAndWritesALoadableBert) {
  WritePairs("train.jsonl");
  FinetuneOptions o;
  o.model_dir = (root_ / "model").string();
  o.train_file = (root_ / "train.jsonl").string();
  o.out_dir = (root_ / "out").string();
  o.trainer.steps = 60;
  o.trainer.batch_size = 8;
  o.trainer.lr = 3e-3;
  o.trainer.warmup = 5;
  o.trainer.chunk_size = 6;
  o.trainer.seed = 3;
  ASSERT_TRUE(RunFinetune(o, quiet_).ok());
  std::ifstream csv(root_ / "out" / "loss.csv");
  std::vector<double> losses;
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) losses.push_back(std::stod(line.substr(line.find(',') + 1)));
  ASSERT_EQ(losses.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += losses[i] / 5, last += losses[55 + i] / 5;
  std::printf("tiny BERT finetune (CLS pooling): loss %.4f (first 5 steps) -> %.4f (last 5)\n",
              first, last);
  EXPECT_LT(last, 0.5 * first);
  std::ifstream report_in(root_ / "out" / "finetune.json");
  EXPECT_EQ(nlohmann::json::parse(report_in)["settings"]["pooling"], "cls");

  auto in = LoadModel((root_ / "model").string());
  auto out = LoadModel((root_ / "out").string());
  ASSERT_TRUE(in.ok() && out.ok()) << out.status();
  EXPECT_EQ((*out)->architecture(), Architecture::kBert);
  EXPECT_NE((*in)->model_id(), (*out)->model_id());
  for (const char* f : {"config.json", "vocab.txt", "modules.json", "sentence_bert_config.json",
                        "1_Pooling/config.json", "neodb_model.json"}) {
    EXPECT_EQ(ReadBytes(root_ / "model" / f), ReadBytes(root_ / "out" / f)) << f;
  }
  // A record of what was done with the source is not carried over.
  EXPECT_TRUE(fs::exists(root_ / "model" / "adapt.json"));
  EXPECT_FALSE(fs::exists(root_ / "out" / "adapt.json"));
  EXPECT_FALSE(fs::exists(root_ / "out" / "neodb_import.json"));
  auto defaults = LoadModelDefaults((root_ / "out").string());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->pooling, Pooling::kCls);
  // The output embeds differently from the input, and as its training model.
  auto bi = (*in)->MakeBackend(BackendOptions{}, Precision::kF32);
  auto bo = (*out)->MakeBackend(BackendOptions{}, Precision::kF32);
  const PackedBatch batch = TinyBatch();
  auto ei = (*bi)->Pool(batch, Pooling::kCls);
  auto eo = (*bo)->Pool(batch, Pooling::kCls);
  ASSERT_TRUE(ei.ok() && eo.ok());
  EXPECT_LT(MinCosine(ei->data<float>(), eo->data<float>(), batch.batch_size(), 32), 0.99);
  EXPECT_GE(TrainVsInference((root_ / "out").string(), batch, Pooling::kCls), 1 - 1e-5);
  // lineage.json names the parent by its id.
  std::ifstream lineage_in(root_ / "out" / "lineage.json");
  const nlohmann::json lineage = nlohmann::json::parse(lineage_in);
  EXPECT_EQ(lineage["parent"]["model_id"], (*in)->model_id());
  EXPECT_EQ(lineage["model_id"], (*out)->model_id());
}

// A BERT run stopped at step 12 and resumed from its checkpoint ends with
// exactly the weights of an uninterrupted run.
TEST_F(BertTrainTest, InterruptedRunResumesToTheSameWeights) {
  WritePairs("train.jsonl");
  auto options = [&](const std::string& out) {
    FinetuneOptions o;
    o.model_dir = (root_ / "model").string();
    o.train_file = (root_ / "train.jsonl").string();
    o.out_dir = (root_ / out).string();
    o.trainer.steps = 20;
    o.trainer.batch_size = 8;
    o.trainer.lr = 3e-3;
    o.trainer.warmup = 3;
    o.trainer.chunk_size = 5;
    o.trainer.train_layers = 1;  // the frozen bottom's cache on the resume path too
    return o;
  };
  ASSERT_TRUE(RunFinetune(options("a"), quiet_).ok());
  FinetuneOptions b = options("b");
  b.trainer.checkpoint_every = 5;
  b.trainer.stop_after = 12;
  ASSERT_TRUE(RunFinetune(b, quiet_).ok());
  EXPECT_FALSE(fs::exists(root_ / "b"));
  b.trainer.stop_after = 0;
  b.trainer.resume = true;
  ASSERT_TRUE(RunFinetune(b, quiet_).ok());
  EXPECT_EQ(ReadBytes(root_ / "a" / "model.safetensors"),
            ReadBytes(root_ / "b" / "model.safetensors"));
  // --train-layers 1: the embeddings and layer 0 are the input's, bit for bit.
  auto in = LoadBertTrainParams((root_ / "model").string());
  auto out = LoadBertTrainParams((root_ / "a").string());
  ASSERT_TRUE(in.ok() && out.ok());
  const int64_t begin = in->layout.TrainableBegin(1);
  EXPECT_TRUE(std::equal(in->values.begin(), in->values.begin() + begin, out->values.begin()));
  EXPECT_FALSE(std::equal(in->values.begin() + begin, in->values.end(),
                          out->values.begin() + begin));
}

TEST_F(BertTrainTest, PretrainStaysNeoBertOnlyButFinetuneAcceptsBert) {
  EXPECT_TRUE(CheckTrainable((root_ / "model").string()).ok());
  FinetuneOptions o;
  WritePairs("train.jsonl");
  o.model_dir = (root_ / "model").string();
  o.train_file = (root_ / "train.jsonl").string();
  o.out_dir = (root_ / "out").string();
  o.mlm_corpus = (root_ / "train.jsonl").string();
  const absl::Status s = RunFinetune(o, quiet_);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("NeoBERT checkpoints only"), std::string::npos) << s;
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

// `neodb distill` with a BERT student (the teacher another tiny BERT): the
// distillation loss falls and the student's output loads as BERT.
TEST_F(BertTrainTest, DistillTrainsABertStudent) {
  fs::create_directories(root_ / "teacher");
  ASSERT_TRUE(SaveBertTrainParams(RandomParams<float>(ParamLayout(config_), 12, 0.2, 0.2),
                                  (root_ / "spec").string(), (root_ / "teacher").string(),
                                  DType::kF32)
                  .ok());
  {
    std::ofstream texts(root_ / "texts.txt");
    const char* words[] = {"the", "of", "and", "to"};
    for (int k = 0; k < kConcepts; ++k) {
      texts << "qw" << k << " " << words[k % 4] << " dw" << (k * 5) % kConcepts << "\n";
      texts << words[(k + 1) % 4] << " dw" << k << "\n";
    }
  }
  DistillJobOptions o;
  o.teacher_dir = (root_ / "teacher").string();
  o.student_dir = (root_ / "model").string();
  o.texts_file = (root_ / "texts.txt").string();
  o.out_dir = (root_ / "out").string();
  o.trainer.steps = 40;
  o.trainer.lr = 3e-3;
  o.trainer.warmup = 4;
  o.trainer.seed = 2;
  o.distill.batch_size = 12;
  o.threads = 1;
  const absl::Status s = RunDistill(o, quiet_, quiet_);
  ASSERT_TRUE(s.ok()) << s;
  std::ifstream csv(root_ / "out" / "loss.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<double> distill;
  while (std::getline(csv, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cols.push_back(c);
    distill.push_back(std::stod(cols.at(9)));  // distill_loss
  }
  ASSERT_EQ(distill.size(), 40u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += distill[i] / 5, last += distill[35 + i] / 5;
  std::printf("tiny BERT student distilled from a tiny BERT teacher: distill loss %.4f -> %.4f\n",
              first, last);
  EXPECT_LT(last, 0.7 * first);
  auto out = LoadModel((root_ / "out").string());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)->architecture(), Architecture::kBert);
  std::ifstream lineage_in(root_ / "out" / "lineage.json");
  const nlohmann::json lineage = nlohmann::json::parse(lineage_in);
  EXPECT_EQ(lineage["model_id"], (*out)->model_id());
  EXPECT_TRUE(lineage["distill"]["teacher"]["model_id"].is_string());
}

// all-MiniLM-L6-v2 from $NEODB_MINILM_DIR (tools/test.sh sets it).
std::string MiniLmDirOrEmpty() {
  const char* env = std::getenv("NEODB_MINILM_DIR");
  return env == nullptr ? "" : env;
}

PackedBatch MiniLmBatch() {
  // Ids of real word pieces, [CLS] … [SEP], lengths 2 to 40.
  PackedBatch batch;
  uint64_t state = 7;
  for (int len : {2, 7, 19, 40, 12}) {
    std::vector<int32_t> ids = {101};
    for (int i = 2; i < len; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      ids.push_back(static_cast<int32_t>(1996 + (state >> 33) % 20000));
    }
    ids.push_back(102);
    AppendSequence(&batch, ids);
  }
  return batch;
}

TEST(BertTrainMiniLm, ForwardEqualsInferenceModel) {
  const std::string dir = MiniLmDirOrEmpty();
  if (dir.empty()) GTEST_SKIP() << "NEODB_MINILM_DIR is not set (tools/test.sh sets it)";
  ASSERT_TRUE(fs::exists(dir + "/model.safetensors")) << dir;
  for (Pooling p : {Pooling::kMean, Pooling::kCls}) {
    const double cos = TrainVsInference(dir, MiniLmBatch(), p);
    std::printf("all-MiniLM-L6-v2, %s pooling: 1 - min cosine training vs inference %.3g\n",
                p == Pooling::kCls ? "CLS" : "mean", 1 - cos);
    EXPECT_GE(cos, 1 - 1e-5);
  }
}

TEST(BertTrainMiniLm, FinetuneLowersTheLossAndRoundTrips) {
  const std::string dir = MiniLmDirOrEmpty();
  if (dir.empty()) GTEST_SKIP() << "NEODB_MINILM_DIR is not set (tools/test.sh sets it)";
  const fs::path root =
      fs::temp_directory_path() / ("neodb_train_bert_minilm_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  {
    std::ofstream out(root / "pairs.jsonl");
    const char* pairs[][2] = {
        {"how do plants make food", "photosynthesis turns light into sugar in leaves"},
        {"capital of france", "paris is the capital and largest city of france"},
        {"what causes tides", "the moon's gravity pulls the oceans into tides"},
        {"boiling point of water", "water boils at one hundred degrees celsius at sea level"},
        {"who wrote hamlet", "hamlet is a tragedy written by william shakespeare"},
        {"speed of light", "light travels about three hundred thousand kilometres a second"},
        {"largest planet", "jupiter is the largest planet in the solar system"},
        {"how vaccines work", "vaccines train the immune system to recognise a pathogen"}};
    for (const auto& p : pairs) {
      out << nlohmann::json({{"query", p[0]}, {"positive", p[1]}}).dump() << "\n";
    }
  }
  FinetuneOptions o;
  o.model_dir = dir;
  o.train_file = (root / "pairs.jsonl").string();
  o.out_dir = (root / "out").string();
  o.trainer.steps = 8;
  o.trainer.batch_size = 8;
  o.trainer.lr = 1e-4;
  o.trainer.warmup = 1;
  o.trainer.temperature = 1.0;  // a loss far from 0 on these easy pairs, so a fall shows
  o.trainer.chunk_size = 8;
  std::FILE* quiet = std::fopen("/dev/null", "w");
  const absl::Status s = RunFinetune(o, quiet);
  std::fclose(quiet);
  ASSERT_TRUE(s.ok()) << s;
  std::ifstream csv(root / "out" / "loss.csv");
  std::vector<double> losses;
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) losses.push_back(std::stod(line.substr(line.find(',') + 1)));
  ASSERT_EQ(losses.size(), 8u);
  std::printf("all-MiniLM-L6-v2 finetune, one batch of 8 pairs: loss %.4f (step 1) -> %.4f (step 8)\n",
              losses.front(), losses.back());
  EXPECT_LT(losses.back(), losses.front());
  auto in = LoadModel(dir);
  auto out = LoadModel((root / "out").string());
  ASSERT_TRUE(in.ok() && out.ok()) << out.status();
  EXPECT_EQ((*out)->architecture(), Architecture::kBert);
  EXPECT_NE((*in)->model_id(), (*out)->model_id());
  for (const char* f : {"config.json", "tokenizer.json", "vocab.txt", "modules.json",
                        "sentence_bert_config.json", "1_Pooling/config.json"}) {
    if (fs::exists(fs::path(dir) / f)) {
      EXPECT_EQ(ReadBytes(fs::path(dir) / f), ReadBytes(root / "out" / f)) << f;
    }
  }
  const PackedBatch batch = MiniLmBatch();
  auto bi = (*in)->MakeBackend(BackendOptions{}, Precision::kF32);
  auto bo = (*out)->MakeBackend(BackendOptions{}, Precision::kF32);
  auto ei = (*bi)->Pool(batch, Pooling::kMean);
  auto eo = (*bo)->Pool(batch, Pooling::kMean);
  ASSERT_TRUE(ei.ok() && eo.ok());
  const double moved = MinCosine(ei->data<float>(), eo->data<float>(), batch.batch_size(), 384);
  std::printf("all-MiniLM-L6-v2 finetune: min cosine input vs output embedding %.6f\n", moved);
  EXPECT_LT(moved, 1 - 1e-6);
  // save → load → save of the trained model is bit-identical.
  auto p = LoadBertTrainParams((root / "out").string());
  ASSERT_TRUE(p.ok()) << p.status();
  fs::create_directories(root / "again");
  ASSERT_TRUE(
      SaveBertTrainParams(*p, (root / "out").string(), (root / "again").string(), DType::kF32)
          .ok());
  EXPECT_EQ(ReadBytes(root / "out" / "model.safetensors"),
            ReadBytes(root / "again" / "model.safetensors"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace neodb::encoder::train
