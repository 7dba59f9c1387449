// Contrastive training with an auxiliary MLM loss (Trainer + MlmObjective)
// on a tiny model: the auxiliary loss keeps token prediction that
// contrastive training alone destroys, retrieval still learns, resume is
// bit-exact, and mismatched settings are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "encoder/train/mlm_objective.h"
#include "encoder/train/mlm_pretrainer.h"
#include "encoder/train/retrieval_eval.h"
#include "encoder/train/trainer.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kConcepts = 16;

NeoBertConfig Config() {
  NeoBertConfig c;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 48;
  c.vocab_size = 128;
  c.max_length = 32;
  return c;
}

SpecialTokens Specials() {
  SpecialTokens s;
  s.pad = 0;
  s.unk = 1;
  s.cls = 101;
  s.sep = 102;
  s.mask = 103;
  return s;
}

// Corpus: 10 11 ... 79 10 11 ...: every token is predictable from its
// neighbours, so MLM can be learnt well.
std::vector<int32_t> Stream(int64_t n) {
  std::vector<int32_t> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[i] = 10 + static_cast<int32_t>(i % 70);
  return s;
}

std::vector<TokenizedPair> ConceptPairs(uint64_t seed, bool with_negatives) {
  return testing::ConceptPairs(kConcepts, seed, with_negatives);
}

std::vector<TokenizedPair> TrainPairs() {
  std::vector<TokenizedPair> train = ConceptPairs(1, true);
  for (TokenizedPair& p : ConceptPairs(4, true)) train.push_back(std::move(p));
  return train;
}

MlmObjectiveOptions MlmOptions() {
  MlmObjectiveOptions o;
  o.batch_tokens = 256;
  o.seq_len = 16;
  o.micro_batch_tokens = 128;
  o.seed = 11;
  return o;
}

TrainerOptions ContrastiveOptions() { return testing::ConceptTrainerOptions(); }

// An encoder and head pre-trained on the stream (so there is MLM skill to
// keep or lose).
struct Pretrained {
  TrainParams<float> params;
  std::vector<float> head_w, head_b;
};

const Pretrained& PretrainedModel() {
  static const Pretrained* model = [] {
    const NeoBertConfig c = Config();
    std::vector<float> w(static_cast<size_t>(c.vocab_size * c.hidden_size)), b(c.vocab_size, 0);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * std::sin(static_cast<float>(i));
    PretrainOptions o;
    o.steps = 200;
    o.batch_tokens = 256;
    o.seq_len = 16;
    o.micro_batch_tokens = 128;
    o.lr = 1e-2;
    o.seed = 5;
    auto p = MlmPretrainer::Create(RandomParams<float>(c, 3, 0.02, 0.0), w, b, Stream(20000),
                                   Specials(), o);
    EXPECT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE((*p)->Run().ok());
    return new Pretrained{(*p)->params(), (*p)->decoder_weight(), (*p)->decoder_bias()};
  }();
  return *model;
}

std::unique_ptr<MlmObjective> Objective(const Pretrained& m) {
  auto o =
      MlmObjective::Create(Config(), m.head_w, m.head_b, Stream(20000), Specials(), MlmOptions());
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? std::move(*o) : nullptr;
}

double HeldOutMlmLoss(const Trainer& t, const MlmObjective& mlm) {
  return mlm.Evaluate(t.model(), t.params().values.data(), 99).loss;
}

TEST(JointTraining, AuxiliaryMlmKeepsTokenPredictionWhileRetrievalLearns) {
  const Pretrained& pre = PretrainedModel();
  const EvalSet eval = BuildEvalSet(ConceptPairs(2, false));
  std::unique_ptr<MlmObjective> reference = Objective(pre);
  ASSERT_NE(reference, nullptr);

  auto alone = Trainer::Create(pre.params, TrainPairs(), ContrastiveOptions());
  ASSERT_TRUE(alone.ok()) << alone.status();
  const double mlm_before = HeldOutMlmLoss(**alone, *reference);
  const double ndcg_before =
      Evaluate((*alone)->model(), (*alone)->params().values.data(), eval, Pooling::kMean)
          .ndcg_at_10;
  ASSERT_TRUE((*alone)->Run().ok());
  // The pre-trained head on the contrastively trained encoder.
  const double mlm_alone = HeldOutMlmLoss(**alone, *reference);
  const double ndcg_alone =
      Evaluate((*alone)->model(), (*alone)->params().values.data(), eval, Pooling::kMean)
          .ndcg_at_10;

  auto joint = Trainer::Create(pre.params, TrainPairs(), ContrastiveOptions(), Objective(pre));
  ASSERT_TRUE(joint.ok()) << joint.status();
  ASSERT_TRUE((*joint)->Run().ok());
  const double mlm_joint = HeldOutMlmLoss(**joint, *(*joint)->mlm());
  const double ndcg_joint =
      Evaluate((*joint)->model(), (*joint)->params().values.data(), eval, Pooling::kMean)
          .ndcg_at_10;

  // Pre-training learnt the stream far beyond the unigram level (ln 70 ≈ 4.25).
  EXPECT_LT(mlm_before, 2.0);
  // Contrastive training alone loses most of it; the auxiliary loss keeps it.
  EXPECT_GT(mlm_alone, mlm_before + 1.0) << mlm_before << " -> " << mlm_alone;
  EXPECT_LT(mlm_joint, mlm_before + 0.3) << mlm_before << " -> " << mlm_joint;
  // And retrieval still learns (chance nDCG@10 over 16 documents is ~0.3),
  // as well as without the auxiliary loss (measured: 0.26 before, 0.59
  // contrastive alone, 0.66 joint; MLM 0.40, 2.66 alone, 0.21 joint).
  EXPECT_GT(ndcg_joint, ndcg_before + 0.3) << ndcg_before << " -> " << ndcg_joint;
  EXPECT_GT(ndcg_joint, ndcg_alone - 0.05) << ndcg_alone << " vs " << ndcg_joint;
  // The step records carry both losses: total = InfoNCE + weight × MLM.
  const StepRecord& last = (*joint)->history().back();
  EXPECT_GT(last.mlm_loss, 0);
  EXPECT_GT(last.loss, last.mlm_loss);
}

class JointResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("neodb_joint_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(JointResumeTest, ResumeIsBitExact) {
  const Pretrained& pre = PretrainedModel();
  TrainerOptions o = ContrastiveOptions();
  o.steps = 8;
  auto straight = Trainer::Create(pre.params, TrainPairs(), o, Objective(pre));
  ASSERT_TRUE(straight.ok()) << straight.status();
  ASSERT_TRUE((*straight)->Run().ok());

  o.checkpoint_dir = dir_.string();
  o.stop_after = 3;
  auto first = Trainer::Create(pre.params, TrainPairs(), o, Objective(pre));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Run().ok());
  ASSERT_EQ((*first)->step(), 3);
  o.stop_after = 0;
  o.resume = true;
  auto second = Trainer::Create(pre.params, TrainPairs(), o, Objective(pre));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ((*second)->step(), 3);
  ASSERT_TRUE((*second)->Run().ok());
  EXPECT_EQ((*second)->params().values, (*straight)->params().values);
  EXPECT_EQ((*second)->mlm()->decoder_weight(), (*straight)->mlm()->decoder_weight());
  EXPECT_EQ((*second)->mlm()->decoder_bias(), (*straight)->mlm()->decoder_bias());
  EXPECT_EQ((*second)->history().back().mlm_loss, (*straight)->history().back().mlm_loss);
  EXPECT_EQ((*second)->history()[1].mlm_loss, (*straight)->history()[1].mlm_loss);

  // A checkpoint made with the auxiliary loss does not resume without it
  // (or with another weight): the continuation could not be exact.
  auto without = Trainer::Create(pre.params, TrainPairs(), o);
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(without.status().message()), HasSubstr("mlm"));
  o.mlm_weight = 0.5;
  auto other_weight = Trainer::Create(pre.params, TrainPairs(), o, Objective(pre));
  ASSERT_FALSE(other_weight.ok());
  EXPECT_THAT(std::string(other_weight.status().message()), HasSubstr("mlm_weight"));
}

TEST(JointTraining, RejectsBadWeightsAndHeads) {
  const Pretrained& pre = PretrainedModel();
  for (double w : {0.0, -1.0, std::nan("")}) {
    TrainerOptions o = ContrastiveOptions();
    o.mlm_weight = w;
    auto t = Trainer::Create(pre.params, TrainPairs(), o, Objective(pre));
    ASSERT_FALSE(t.ok()) << w;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  }
  // A head of the wrong shape, and a corpus with ids outside the vocabulary.
  std::vector<float> short_head(pre.head_w.begin(), pre.head_w.end() - 1);
  EXPECT_EQ(MlmObjective::Create(Config(), short_head, pre.head_b, Stream(20000), Specials(),
                                 MlmOptions())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<int32_t> bad = Stream(20000);
  bad[5] = 128;
  EXPECT_EQ(MlmObjective::Create(Config(), pre.head_w, pre.head_b, bad, Specials(), MlmOptions())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::encoder::train
