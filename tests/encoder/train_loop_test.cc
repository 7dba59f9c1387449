// The training loop on a tiny model: loss goes down and retrieval metrics go
// up; resume equals uninterrupted training; the optimiser, schedule, data
// order, metrics and pair-file errors behave as documented.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "encoder/train/adamw.h"
#include "encoder/train/float_file.h"
#include "encoder/train/loss_plot.h"
#include "encoder/train/pairs.h"
#include "encoder/train/retrieval_eval.h"
#include "encoder/train/trainer.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

NeoBertConfig LoopConfig() {
  NeoBertConfig c;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 48;
  c.vocab_size = 128;
  c.max_length = 16;
  return c;
}

using testing::ConceptPairs;
TrainerOptions LoopOptions() { return testing::ConceptTrainerOptions(); }
// Enough steps for every trained entry that gets a gradient to move.
TrainerOptions FiveStepOptions() {
  TrainerOptions o = LoopOptions();
  o.steps = 5;
  return o;
}

TEST(TrainLoop, LossGoesDownAndRecallRises) {
  const NeoBertConfig config = LoopConfig();
  // Two noisy variants of every concept, so that the fillers cannot be memorised.
  std::vector<TokenizedPair> train = ConceptPairs(16, 1, true);
  for (TokenizedPair& p : ConceptPairs(16, 4, true)) train.push_back(std::move(p));
  const EvalSet eval = BuildEvalSet(ConceptPairs(16, 2, false));
  TrainParams<float> params = RandomParams<float>(config, 3, 0.1, 0.0);
  auto trainer = Trainer::Create(std::move(params), train, LoopOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  const RetrievalMetrics before =
      Evaluate((*trainer)->model(), (*trainer)->params().values.data(), eval, Pooling::kMean);
  ASSERT_TRUE((*trainer)->Run().ok());
  const RetrievalMetrics after =
      Evaluate((*trainer)->model(), (*trainer)->params().values.data(), eval, Pooling::kMean);
  const auto& h = (*trainer)->history();
  ASSERT_EQ(h.size(), 120u);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += h[i].loss / 10, last += h[h.size() - 1 - i].loss / 10;
  std::printf("loss %.4f -> %.4f; R@1 %.3f -> %.3f; nDCG@10 %.3f -> %.3f\n", first, last,
              before.recall_at_1, after.recall_at_1, before.ndcg_at_10, after.ndcg_at_10);
  EXPECT_LT(last, 0.5 * first);
  EXPECT_GT(after.recall_at_1, before.recall_at_1 + 0.3);
  EXPECT_GT(after.ndcg_at_10, before.ndcg_at_10 + 0.2);
  EXPECT_EQ(before.num_queries, 16);
  EXPECT_EQ(before.pool_size, 16);
}

TEST(TrainLoop, TopLayersOnlyLeavesTheBottomUntouched) {
  const NeoBertConfig config = LoopConfig();
  TrainParams<float> params = RandomParams<float>(config, 3, 0.1, 0.0);
  const std::vector<float> initial = params.values;
  TrainerOptions o = FiveStepOptions();
  o.train_layers = 1;
  auto trainer = Trainer::Create(std::move(params), ConceptPairs(16, 1, true), o);
  ASSERT_TRUE(trainer.ok());
  ASSERT_TRUE((*trainer)->Run().ok());
  const auto& p = (*trainer)->params();
  const int64_t begin = p.layout.TrainableBegin(1);
  for (int64_t i = 0; i < begin; ++i) ASSERT_EQ(p.values[i], initial[i]) << i;
  int64_t changed = 0;
  for (int64_t i = begin; i < p.layout.total(); ++i) changed += p.values[i] != initial[i];
  EXPECT_GT(changed, (p.layout.total() - begin) / 2);
}

// The zero blocks of a widened or pruned checkpoint: Adam would move each of
// their entries by about lr per step; with keep_zero_weights (the default)
// they stay exactly 0 while everything else trains, and without it they fill.
TEST(TrainLoop, MatrixEntriesThatStartAtZeroStayZero) {
  const NeoBertConfig config = LoopConfig();
  for (const bool keep : {true, false}) {
    SCOPED_TRACE(keep ? "keep_zero_weights" : "train zeros");
    TrainParams<float> params = RandomParams<float>(config, 3, 0.1, 0.0);
    // A row block of layer 0's wo (what it writes into the last 8 dims) and
    // the embeddings' last 8 dims of every other token.
    std::vector<int64_t> zeroed;
    const ParamEntry& wo = params.layout.layer(0, kWo);
    for (int64_t r = config.hidden_size - 8; r < config.hidden_size; ++r) {
      for (int64_t c = 0; c < config.hidden_size; ++c)
        zeroed.push_back(wo.offset + r * config.hidden_size + c);
    }
    const ParamEntry& emb = params.layout.embeddings();
    for (int64_t t = 0; t < config.vocab_size; t += 2) {
      for (int64_t d = config.hidden_size - 8; d < config.hidden_size; ++d)
        zeroed.push_back(emb.offset + t * config.hidden_size + d);
    }
    for (int64_t i : zeroed) params.values[i] = 0.0f;
    const std::vector<float> initial = params.values;
    TrainerOptions o = FiveStepOptions();
    o.keep_zero_weights = keep;
    auto trainer = Trainer::Create(std::move(params), ConceptPairs(16, 1, true), o);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    // Random weights have no exact zeros of their own: exactly the block.
    EXPECT_EQ((*trainer)->frozen_zero_weights(), keep ? static_cast<int64_t>(zeroed.size()) : 0);
    ASSERT_TRUE((*trainer)->Run().ok());
    const auto& p = (*trainer)->params();
    // Every entry of the wo block has a gradient; embedding rows only of the
    // tokens the 5 steps saw.
    const int64_t wo_block = 8 * config.hidden_size;
    int64_t moved = 0, wo_moved = 0;
    for (size_t k = 0; k < zeroed.size(); ++k) {
      moved += p.values[zeroed[k]] != 0.0f;
      wo_moved += static_cast<int64_t>(k) < wo_block && p.values[zeroed[k]] != 0.0f;
    }
    int64_t changed = 0;
    for (int64_t i = 0; i < p.layout.total(); ++i) changed += p.values[i] != initial[i];
    if (keep) {
      EXPECT_EQ(moved, 0);
    } else {
      EXPECT_GT(wo_moved, wo_block / 2);
    }
    EXPECT_GT(changed, p.layout.total() / 2);
  }
}

// A pass-through channel: the last 8 dims, which no layer reads (qkv and w12
// columns 0) or writes (wo and w3 rows 0), carry the embeddings' values to
// the final norm. freeze_channel keeps those embedding entries exactly as
// they are, non-zero ones included, while the rest of the model trains;
// without it they train like any other entry.
TEST(TrainLoop, FreezeChannelKeepsThePassThroughEmbeddingsAsTheyAre) {
  const NeoBertConfig config = LoopConfig();
  const int64_t c = config.hidden_size, first = c - 8;
  auto with_channel = [&] {
    TrainParams<float> params = RandomParams<float>(config, 3, 0.1, 0.0);
    for (int64_t l = 0; l < config.num_hidden_layers; ++l) {
      for (const LayerTensor t : {kQkv, kW12}) {
        const ParamEntry& e = params.layout.layer(l, t);
        for (int64_t r = 0; r < e.shape[0]; ++r)
          for (int64_t d = first; d < c; ++d) params.at(e)[r * c + d] = 0.0f;
      }
      for (const LayerTensor t : {kWo, kW3}) {
        const ParamEntry& e = params.layout.layer(l, t);
        std::fill(params.at(e) + first * e.shape[1], params.at(e) + c * e.shape[1], 0.0f);
      }
    }
    return params;
  };
  {
    const TrainParams<float> params = with_channel();
    std::vector<int64_t> expected;
    for (int64_t d = first; d < c; ++d) expected.push_back(d);
    EXPECT_EQ(PassThroughDims(params), expected);
    // One non-zero read of one dim takes it out of the channel.
    TrainParams<float> read = with_channel();
    read.at(read.layout.layer(1, kW12))[3 * c + first] = 0.5f;
    EXPECT_EQ(PassThroughDims(read).size(), 7u);
    EXPECT_TRUE(PassThroughDims(RandomParams<float>(config, 3, 0.1, 0.0)).empty());
  }
  for (const bool freeze : {true, false}) {
    SCOPED_TRACE(freeze ? "freeze_channel" : "channel trains");
    TrainParams<float> params = with_channel();
    const std::vector<float> initial = params.values;
    TrainerOptions o = FiveStepOptions();
    o.freeze_channel = freeze;
    auto trainer = Trainer::Create(std::move(params), ConceptPairs(16, 1, true), o);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    EXPECT_EQ((*trainer)->frozen_channel_weights(), freeze ? config.vocab_size * 8 : 0);
    ASSERT_TRUE((*trainer)->Run().ok());
    const auto& p = (*trainer)->params();
    const ParamEntry& emb = p.layout.embeddings();
    int64_t channel_moved = 0, other_emb_moved = 0;
    for (int64_t i = emb.offset; i < emb.offset + emb.numel; ++i) {
      const bool in_channel = (i - emb.offset) % c >= first;
      const bool moved = p.values[i] != initial[i];
      (in_channel ? channel_moved : other_emb_moved) += moved;
    }
    // The tokens the 5 steps saw move in the other dims either way.
    EXPECT_GT(other_emb_moved, 100);
    if (freeze) {
      EXPECT_EQ(channel_moved, 0);
    } else {
      EXPECT_GT(channel_moved, 100);
    }
  }
  // A model without a channel, or embeddings that do not train: a clear error.
  TrainerOptions o = LoopOptions();
  o.freeze_channel = true;
  auto none = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), ConceptPairs(16, 1, true), o);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("no pass-through dims"));
  o.train_layers = 1;
  auto top = Trainer::Create(with_channel(), ConceptPairs(16, 1, true), o);
  ASSERT_FALSE(top.ok());
  EXPECT_THAT(std::string(top.status().message()), HasSubstr("embeddings do not train"));
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("neodb_train_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(TrainLoop, ResumeEqualsUninterruptedTraining) {
  const NeoBertConfig config = LoopConfig();
  const std::vector<TokenizedPair> data = ConceptPairs(16, 1, true);
  TrainerOptions o = LoopOptions();
  o.steps = 12;
  o.checkpoint_every = 4;

  TempDir dir_a;
  o.checkpoint_dir = dir_a.path();
  auto a = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Run().ok());

  TempDir dir_b;
  o.checkpoint_dir = dir_b.path();
  o.stop_after = 6;  // "interrupted" after step 6 (between periodic checkpoints)
  auto b1 = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(b1.ok());
  ASSERT_TRUE((*b1)->Run().ok());
  EXPECT_EQ((*b1)->step(), 6);
  EXPECT_FALSE((*b1)->finished());
  o.stop_after = 0;
  o.resume = true;
  // Fresh (different) initial weights: everything must come from the checkpoint.
  auto b2 = Trainer::Create(RandomParams<float>(config, 99, 0.1, 0.0), data, o);
  ASSERT_TRUE(b2.ok()) << b2.status();
  EXPECT_EQ((*b2)->step(), 6);
  ASSERT_TRUE((*b2)->Run().ok());
  ASSERT_TRUE((*b2)->finished());

  EXPECT_EQ((*a)->params().values, (*b2)->params().values);
  ASSERT_EQ((*a)->history().size(), (*b2)->history().size());
  for (size_t i = 0; i < (*a)->history().size(); ++i) {
    EXPECT_EQ((*a)->history()[i].loss, (*b2)->history()[i].loss) << "step " << i + 1;
    EXPECT_EQ((*a)->history()[i].lr, (*b2)->history()[i].lr);
  }

  // Different settings cannot resume that checkpoint.
  o.lr *= 2;
  auto bad = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("lr"));
  // A corrupted checkpoint file is DATA_LOSS.
  o.lr /= 2;
  const std::string m = dir_b.path() + "/checkpoint/adam_m.bin";
  {
    std::fstream f(m, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  auto corrupt = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), absl::StatusCode::kDataLoss) << corrupt.status();
}

TEST(TrainLoop, CancelCheckpointsAndResumesExactly) {
  const NeoBertConfig config = LoopConfig();
  const std::vector<TokenizedPair> data = ConceptPairs(16, 1, true);
  TrainerOptions o = LoopOptions();
  o.steps = 8;
  auto a = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Run().ok());

  TempDir dir;
  o.checkpoint_dir = dir.path();
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  auto b = Trainer::Create(RandomParams<float>(config, 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(b.ok());
  // The "signal" arrives during step 3.
  const absl::Status s = (*b)->Run([&](const StepRecord& r) { cancel = r.step == 3; });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_EQ((*b)->step(), 3);
  cancel = false;
  o.resume = true;
  auto c = Trainer::Create(RandomParams<float>(config, 99, 0.1, 0.0), data, o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->step(), 3);
  ASSERT_TRUE((*c)->Run().ok());
  EXPECT_EQ((*a)->params().values, (*c)->params().values);
}

TEST(TrainLoop, ResumeWithoutCheckpointIsAnError) {
  TempDir dir;
  TrainerOptions o = LoopOptions();
  o.checkpoint_dir = dir.path();
  o.resume = true;
  auto t = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0),
                           ConceptPairs(16, 1, false), o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
}

TEST(TrainLoop, DataOrderIsSeededAndEpochsCoverDistinctPairs) {
  const std::vector<TokenizedPair> data = ConceptPairs(16, 1, false);
  TrainerOptions o = LoopOptions();
  auto t1 = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  auto t2 = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  o.seed = 8;
  auto t3 = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(t1.ok() && t2.ok() && t3.ok());
  EXPECT_EQ((*t1)->BatchForStep(5).queries, (*t2)->BatchForStep(5).queries);
  EXPECT_NE((*t1)->BatchForStep(0).queries, (*t3)->BatchForStep(0).queries);
  // 16 pairs, batch 8: steps 0 and 1 form one epoch covering each pair once.
  std::set<std::vector<int32_t>> seen;
  for (int s = 0; s < 2; ++s) {
    for (const auto& q : (*t1)->BatchForStep(s).queries) EXPECT_TRUE(seen.insert(q).second);
  }
  EXPECT_EQ(seen.size(), 16u);
}

TEST(TrainLoop, NegativesPerPairDrawsDistinctNegativesOfThePairsOwnPool) {
  // Each pair carries a pool of 6 negatives tagged with its query's concept
  // token, so a drawn negative can be traced to the pair it came from.
  std::vector<TokenizedPair> data = ConceptPairs(16, 1, false);
  for (TokenizedPair& p : data) {
    p.negatives.clear();
    for (int32_t k = 0; k < 6; ++k) p.negatives.push_back({p.query[1], 1000 + k});
  }
  TrainerOptions o = LoopOptions();  // batch 8
  o.negatives_per_pair = 2;
  auto t = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  auto again = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(t.ok() && again.ok());
  std::set<std::vector<int32_t>> drawn_for_first_pair;
  for (int64_t step = 0; step < 40; ++step) {
    const ContrastiveBatch b = (*t)->BatchForStep(step);
    ASSERT_EQ(b.negatives.size(), 2 * b.queries.size());
    EXPECT_EQ(b.negatives, (*again)->BatchForStep(step).negatives);  // a pure function
    for (size_t q = 0; q < b.queries.size(); ++q) {
      const auto& n0 = b.negatives[2 * q];
      const auto& n1 = b.negatives[2 * q + 1];
      EXPECT_EQ(n0[0], b.queries[q][1]);  // from this pair's own pool
      EXPECT_EQ(n1[0], b.queries[q][1]);
      EXPECT_NE(n0, n1);  // distinct
      if (b.queries[q] == data[0].query) drawn_for_first_pair.insert(n0);
    }
  }
  // 20 epochs: the first pair met more than one negative of its pool.
  EXPECT_GT(drawn_for_first_pair.size(), 1u);
  // A count at or above the pool's size takes the whole pool, in order.
  o.negatives_per_pair = 6;
  auto all = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)->BatchForStep(0).negatives.size(), 6 * 8u);
  EXPECT_EQ((*all)->BatchForStep(0).negatives[1][1], 1001);
  o.negatives_per_pair = -1;
  EXPECT_FALSE(Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o).ok());
}

// A query is never pushed away from one of its own positives: another pair's
// positive that is the same document, another positive of the same query, or
// another pair's negative that is one of them. Checked against the pairs by
// brute force over 20 epochs of batches.
TEST(TrainLoop, KnownPositivesAreNotInBatchNegatives) {
  std::vector<TokenizedPair> data = ConceptPairs(16, 1, true);
  data[1].query = data[0].query;           // one query, two relevant documents
  data[3].positive = data[2].positive;     // two queries, one document
  data[5].negatives = {data[4].positive};  // pair 5's negative is pair 4's positive
  auto positives_of = [&](const std::vector<int32_t>& query) {
    std::set<std::vector<int32_t>> s;
    for (const TokenizedPair& p : data)
      if (p.query == query) s.insert(p.positive);
    return s;
  };
  auto t = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, LoopOptions());
  ASSERT_TRUE(t.ok()) << t.status();
  int64_t excluded = 0, batches_without = 0;
  for (int64_t step = 0; step < 40; ++step) {
    const ContrastiveBatch b = (*t)->BatchForStep(step);
    const int64_t nq = static_cast<int64_t>(b.queries.size());
    const int64_t cand = b.num_texts() - nq;
    if (b.excluded.empty()) {
      ++batches_without;
    } else {
      ASSERT_EQ(static_cast<int64_t>(b.excluded.size()), nq * cand);
    }
    for (int64_t i = 0; i < nq; ++i) {
      const auto own = positives_of(b.queries[i]);
      for (int64_t j = 0; j < cand; ++j) {
        const bool is_positive = j != i && own.count(b.text(nq + j)) > 0;
        const bool out = !b.excluded.empty() && b.excluded[i * cand + j] != 0;
        EXPECT_EQ(out, is_positive) << "step " << step << " query " << i << " candidate " << j;
        excluded += out ? 1 : 0;
      }
    }
  }
  // Over 20 epochs of 2 batches, each kind met in a batch.
  EXPECT_GE(excluded, 6);
  EXPECT_GT(batches_without, 0);
}

TEST(TrainLoop, CreateRejectsBadOptions) {
  const std::vector<TokenizedPair> data = ConceptPairs(4, 1, false);
  TrainerOptions o = LoopOptions();  // batch 8 > 4 pairs
  auto t = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("--batch-size"));
  o.batch_size = 2;
  o.train_layers = 3;  // the model has 2
  t = Trainer::Create(RandomParams<float>(LoopConfig(), 3, 0.1, 0.0), data, o);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("--train-layers"));
}

TEST(TrainOptimizer, ScheduleWarmsUpThenDecaysToTenPercent) {
  EXPECT_DOUBLE_EQ(LearningRate(1, 100, 10, 1.0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRate(10, 100, 10, 1.0), 1.0);
  EXPECT_NEAR(LearningRate(55, 100, 10, 1.0), 0.55, 1e-12);  // cosine midpoint
  EXPECT_NEAR(LearningRate(100, 100, 10, 1.0), 0.1, 1e-12);
  EXPECT_LT(LearningRate(80, 100, 10, 1.0), LearningRate(70, 100, 10, 1.0));
  EXPECT_DOUBLE_EQ(LearningRate(1, 100, 0, 2.0),
                   2.0 * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI / 100))));
}

TEST(TrainOptimizer, ClipScalesToMaxNorm) {
  std::vector<float> g = {3, 4};
  EXPECT_DOUBLE_EQ(ClipGradNorm(g.data(), 2, 1.0), 5.0);
  EXPECT_NEAR(g[0], 0.6f, 1e-7);
  EXPECT_NEAR(g[1], 0.8f, 1e-7);
  std::vector<float> small = {0.3f, 0.4f};
  ClipGradNorm(small.data(), 2, 1.0);
  EXPECT_EQ(small[0], 0.3f);
}

TEST(TrainOptimizer, AdamWMatchesHandComputationAndSkipsNormDecay) {
  const NeoBertConfig config = testing::TinyConfig();
  TrainParams<float> p = RandomParams<float>(config, 5, 0.1, 0.2);
  const int64_t begin = p.layout.TrainableBegin(1);
  AdamW opt(p.layout, begin, AdamWOptions{});
  std::vector<float> grads(p.layout.total() - begin, 0.0f);
  const ParamEntry& norm = p.layout.final_norm();
  const ParamEntry& w3 = p.layout.layer(1, kW3);
  const float norm0 = p.at(norm)[0], w30 = p.at(w3)[0], w31 = p.at(w3)[1];
  grads[w3.offset - begin] = 0.5f;
  const double lr = 0.01;
  opt.Step(p.values.data(), grads.data(), lr);
  // Step 1: m̂ = g, v̂ = g², update = lr · g / (|g| + ε) ≈ lr.
  EXPECT_NEAR(p.at(w3)[0], w30 * (1 - lr * 0.01) - lr * 0.5 / (0.5 + 1e-8), 1e-7);
  EXPECT_NEAR(p.at(w3)[1], w31 * (1 - lr * 0.01), 1e-9);  // zero grad: decay only
  EXPECT_EQ(p.at(norm)[0], norm0);                        // norm weight: no decay
}

TEST(TrainEval, MetricsOnAHandBuiltRanking) {
  // dim 2; pool vectors at angles so the ranking for q0 is p0 > p1 > p2.
  const std::vector<float> pool = {1, 0, 1, 1, 0, 1};
  const std::vector<float> queries = {1, 0.1f, 0, 1};
  // q0's relevant doc is p1 (rank 2); q1's relevant docs are p2 (rank 1) and p0 (rank 3).
  const RetrievalMetrics m = ScoreRetrieval(queries.data(), 2, pool.data(), 3, 2, {{1}, {2, 0}});
  EXPECT_NEAR(m.recall_at_1, (0 + 0.5) / 2, 1e-12);
  EXPECT_NEAR(m.recall_at_10, 1.0, 1e-12);
  EXPECT_NEAR(m.mrr_at_10, (0.5 + 1) / 2, 1e-12);
  const double ndcg0 = (1 / std::log2(3.0)) / 1.0;
  const double ndcg1 = (1 + 1 / std::log2(4.0)) / (1 + 1 / std::log2(3.0));
  EXPECT_NEAR(m.ndcg_at_10, (ndcg0 + ndcg1) / 2, 1e-12);
}

TEST(TrainEval, EvalSetGroupsQueriesAndDeduplicatesThePool) {
  std::vector<TokenizedPair> pairs(3);
  pairs[0].query = {1, 5, 2};
  pairs[0].positive = {1, 6, 2};
  pairs[0].negatives = {{1, 7, 2}};
  pairs[1].query = {1, 5, 2};  // same query, second relevant doc
  pairs[1].positive = {1, 7, 2};
  pairs[2].query = {1, 8, 2};
  pairs[2].positive = {1, 6, 2};
  const EvalSet set = BuildEvalSet(pairs);
  EXPECT_EQ(set.queries.size(), 2u);
  EXPECT_EQ(set.pool.size(), 2u);
  EXPECT_EQ(set.relevant[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(set.relevant[1], (std::vector<int64_t>{0}));
}

TEST(TrainFloatFile, RoundTripAndTruncationDetected) {
  TempDir dir;
  const std::string path = dir.path() + "/x.bin";
  ASSERT_TRUE(WriteFloatFile(path, {1.5f, -2.0f, 3.25f}).ok());
  auto back = ReadFloatFile(path, 3);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_EQ(ReadFloatFile(path, 4).status().code(), absl::StatusCode::kDataLoss);
  fs::resize_file(path, fs::file_size(path) - 3);
  EXPECT_EQ(ReadFloatFile(path).status().code(), absl::StatusCode::kDataLoss);
}

TEST(TrainPlot, WritesAPngOfTheRequestedSize) {
  TempDir dir;
  const std::string path = dir.path() + "/loss.png";
  std::vector<double> x, y;
  for (int i = 1; i <= 300; ++i) x.push_back(i), y.push_back(3.0 / std::sqrt(i));
  ASSERT_TRUE(WriteLossPlotPng(path, x, y, 640, 400).ok());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 33u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
           (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
  };
  EXPECT_EQ(be32(16), 640u);  // IHDR width
  EXPECT_EQ(be32(20), 400u);  // IHDR height
  EXPECT_FALSE(WriteLossPlotPng(dir.path() + "/x.png", {1, 2}, {1}).ok());
  EXPECT_FALSE(WriteLossPlotPng("/nonexistent/dir/x.png", x, y).ok());
}

}  // namespace
}  // namespace neodb::encoder::train
