// Finite-difference gradient checks (F64) of the BERT training model: its
// new ops (LayerNorm with bias, erf GELU, bias, absolute positions, CLS
// pooling) one by one, then the whole model on random tiny configs (2 layers,
// hidden 16-32, 2-4 heads, several sequences packed, mean and CLS pooling),
// the top-N-layers tail, and InfoNCE through GradCache == the full batch.
//
// Bounds: central differences with h = 1e-5 in F64 have truncation error
// O(h²·f''') ≈ 1e-10 and rounding error O(ε·|f|/h) ≈ 1e-11 relative to the
// O(1) losses here, so a correct backward agrees to ~1e-7 norm-wise; 1e-5
// leaves room for the LayerNorm's 1/σ amplification while still failing on
// any wrong term (a missing term is an O(1) relative error).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "encoder/train/embedding_pooling.h"
#include "encoder/train/gelu.h"
#include "encoder/train/grad_cache.h"
#include "encoder/train/info_nce.h"
#include "encoder/train/layer_norm.h"
#include "encoder/train/linear.h"
#include "encoder/train/train_model.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

using testing::ExpectGradientsClose;
using testing::NumericGradient;
using testing::RandomVector;
using testing::RelativeError;

constexpr double kTol = 1e-5;

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// The worst norm-wise relative error any whole-model check saw (printed).
double g_worst = 0;

void Check(const std::string& what, const double* analytic, const double* numeric, int64_t n) {
  if (what.find("attention.self.key.bias") != std::string::npos) {
    // Exactly 0: q·(k + b) shifts a whole softmax row by q·b, which the
    // softmax ignores — the key bias has no effect on the output.
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(analytic[i], 0.0, 1e-12) << what;
      ASSERT_NEAR(numeric[i], 0.0, 1e-8) << what;
    }
    return;
  }
  g_worst = std::max(g_worst, RelativeError(analytic, numeric, n));
  ExpectGradientsClose(what, analytic, numeric, n, kTol, 1e-9);
}

TEST(BertTrainGradcheck, LayerNorm) {
  const int64_t rows = 3, cols = 7;
  std::vector<double> x = RandomVector(rows * cols, 1, 2.0);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] += 0.5 * static_cast<double>(i % cols);
  std::vector<double> w = RandomVector(cols, 2), b = RandomVector(cols, 3);
  const std::vector<double> r = RandomVector(rows * cols, 4);
  std::vector<double> y(x.size()), mean(rows), rstd(rows);
  auto loss = [&] {
    LayerNormForward(x.data(), w.data(), b.data(), rows, cols, 1e-5, y.data(), mean.data(),
                     rstd.data());
    return Dot(y, r);
  };
  loss();
  std::vector<double> dx(x.size(), 0.0), dw(cols, 0.0), db(cols, 0.0);
  LayerNormBackward(x.data(), w.data(), mean.data(), rstd.data(), r.data(), rows, cols, dx.data(),
                    dw.data(), db.data());
  Check("dx", dx.data(), NumericGradient(loss, x.data(), x.size()).data(), x.size());
  Check("dw", dw.data(), NumericGradient(loss, w.data(), cols).data(), cols);
  Check("db", db.data(), NumericGradient(loss, b.data(), cols).data(), cols);
}

TEST(BertTrainGradcheck, GeluAndBias) {
  const int64_t rows = 4, cols = 5;
  std::vector<double> u = RandomVector(rows * cols, 5, 3.0);
  std::vector<double> b = RandomVector(cols, 6);
  const std::vector<double> r = RandomVector(rows * cols, 7);
  std::vector<double> v(u.size()), g(u.size());
  auto loss = [&] {
    v = u;
    AddBias(b.data(), rows, cols, v.data());
    GeluForward(v.data(), rows * cols, g.data());
    return Dot(g, r);
  };
  loss();
  std::vector<double> dv(u.size()), db(cols, 0.0);
  GeluBackward(v.data(), r.data(), rows * cols, dv.data());
  BiasBackward(dv.data(), rows, cols, db.data());
  Check("du", dv.data(), NumericGradient(loss, u.data(), u.size()).data(), u.size());
  Check("db", db.data(), NumericGradient(loss, b.data(), cols).data(), cols);
}

TEST(BertTrainGradcheck, PositionEmbeddingAndClsPool) {
  const int64_t dim = 3;
  const std::vector<int64_t> offsets = {0, 3, 5, 9};
  std::vector<double> table = RandomVector(6 * dim, 8);
  const std::vector<double> base = RandomVector(9 * dim, 9);
  const std::vector<double> r = RandomVector(3 * dim, 10);
  std::vector<double> x(base.size()), pooled(3 * dim);
  auto loss = [&] {
    x = base;
    PositionEmbeddingForward(table.data(), offsets.data(), 3, dim, x.data());
    ClsPoolForward(x.data(), offsets.data(), 3, dim, pooled.data());
    return Dot(pooled, r);
  };
  std::vector<double> dx(x.size(), 0.0), dt(table.size(), 0.0);
  ClsPoolBackward(r.data(), offsets.data(), 3, dim, dx.data());
  PositionEmbeddingBackward(dx.data(), offsets.data(), 3, dim, dt.data());
  Check("dtable", dt.data(), NumericGradient(loss, table.data(), table.size()).data(),
        table.size());
}

struct TinyBert {
  int64_t hidden, heads;
  Pooling pooling;
  uint64_t seed;
};

BertConfig TinyBertConfig(const TinyBert& t) {
  BertConfig c;
  c.hidden_size = t.hidden;
  c.num_hidden_layers = 2;
  c.num_attention_heads = t.heads;
  c.intermediate_size = 2 * t.hidden;
  c.vocab_size = 40;
  c.max_position_embeddings = 12;
  c.type_vocab_size = 2;
  c.layer_norm_eps = 1e-5;
  return c;
}

// Four sequences packed end to end, lengths 5, 3, 7, 1 (a lone [CLS] too).
PackedBatch TinyBatch() {
  PackedBatch batch;
  AppendSequence(&batch, {1, 5, 6, 7, 2});
  AppendSequence(&batch, {1, 8, 2});
  AppendSequence(&batch, {1, 9, 10, 11, 9, 12, 2});
  AppendSequence(&batch, {1});
  return batch;
}

class BertWholeModel : public ::testing::TestWithParam<TinyBert> {};

// loss = a random linear functional of the pooled output; every parameter
// that influences it is checked (token_type row 1 and the positions past the
// longest sequence do not: their gradient must be exactly 0).
TEST_P(BertWholeModel, PooledOutput) {
  const TinyBert t = GetParam();
  const ParamLayout layout(TinyBertConfig(t));
  TrainParams<double> params = RandomParams<double>(layout, t.seed, 0.3, 0.3);
  TrainModel<double> model(params.layout, t.pooling);
  const PackedBatch batch = TinyBatch();
  const int64_t c = t.hidden;
  const std::vector<double> r = RandomVector(batch.batch_size() * c, t.seed + 1);
  std::vector<double> pooled(batch.batch_size() * c);
  auto loss = [&] {
    model.Forward(params.values.data(), batch, 0, nullptr, t.pooling, pooled.data(), nullptr);
    return Dot(pooled, r);
  };
  TrainModel<double>::Activations acts;
  model.Forward(params.values.data(), batch, 0, nullptr, t.pooling, pooled.data(), &acts);
  std::vector<double> grads(params.values.size(), 0.0);
  model.Backward(params.values.data(), batch, acts, r.data(), 0, grads.data());
  const auto numeric = NumericGradient(loss, params.values.data(), layout.total());
  for (const ParamEntry& e : layout.entries()) {
    int64_t n = e.numel;
    if (e.name == "embeddings.token_type_embeddings.weight") n = c;           // row 0
    if (e.name == "embeddings.position_embeddings.weight") n = 7 * c;         // longest is 7
    Check(e.name, grads.data() + e.offset, numeric.data() + e.offset, n);
    for (int64_t i = n; i < e.numel; ++i) ASSERT_EQ(grads[e.offset + i], 0.0) << e.name;
  }
  // Top layer only, forward from the cached input of layer 1 (GradCache's
  // path): the gradient of the trained tail is the same.
  const int64_t begin = layout.TrainableBegin(1);
  ASSERT_EQ(begin, layout.LayerBegin(1));
  model.Forward(params.values.data(), batch, 0, nullptr, t.pooling, pooled.data(), nullptr);
  std::vector<double> boundary(batch.total_tokens() * c), pooled2(pooled.size());
  model.Forward(params.values.data(), batch, 0, nullptr, t.pooling, pooled2.data(), nullptr, 1,
                boundary.data());
  TrainModel<double>::Activations top;
  model.Forward(params.values.data(), batch, 1, boundary.data(), t.pooling, pooled2.data(), &top);
  for (size_t i = 0; i < pooled.size(); ++i) EXPECT_NEAR(pooled2[i], pooled[i], 1e-12);
  std::vector<double> tail(params.values.size() - begin, 0.0);
  model.Backward(params.values.data(), batch, top, r.data(), begin, tail.data());
  for (size_t i = 0; i < tail.size(); ++i) ASSERT_NEAR(tail[i], grads[begin + i], 1e-12) << i;
}

INSTANTIATE_TEST_SUITE_P(Configs, BertWholeModel,
                         ::testing::Values(TinyBert{16, 2, Pooling::kMean, 101},
                                           TinyBert{16, 4, Pooling::kCls, 102},
                                           TinyBert{24, 3, Pooling::kMean, 103},
                                           TinyBert{32, 4, Pooling::kCls, 104},
                                           TinyBert{32, 2, Pooling::kMean, 105}));

ContrastiveBatch TinyContrastiveBatch() {
  ContrastiveBatch b;
  b.queries = {{1, 5, 6, 2}, {1, 8, 2}, {1, 9, 10, 11, 2}};
  b.positives = {{1, 15, 16, 17, 2}, {1, 18, 19, 2}, {1, 20, 2}};
  b.negatives = {{1, 21, 22, 2}, {1, 23, 24, 25, 26, 2}};
  return b;
}

// The loss of one forward over every text (no chunking, no cache).
double FullBatchLoss(const TrainModel<double>& model, const double* params,
                     const ContrastiveBatch& cb) {
  const int64_t c = model.layout().hidden_size();
  PackedBatch all;
  for (int64_t t = 0; t < cb.num_texts(); ++t) AppendSequence(&all, cb.text(t));
  const int64_t b = static_cast<int64_t>(cb.queries.size());
  const int64_t n = cb.num_texts();
  std::vector<double> emb(n * c), d_emb(n * c);
  model.Forward(params, all, 0, nullptr, model.pooling(), emb.data(), nullptr);
  return InfoNce(emb.data(), emb.data() + b * c, b, emb.data() + 2 * b * c, n - 2 * b, c, 0.07,
                 d_emb.data(), d_emb.data() + b * c, d_emb.data() + 2 * b * c, nullptr)
      .loss;
}

class BertGradCache : public ::testing::TestWithParam<std::tuple<Pooling, int64_t>> {};

// InfoNCE on cosine (the embeddings normalised inside the loss, as finetune
// trains) through GradCache with chunks of 3, 3, 2 — all layers or the top
// one — against finite differences of the full-batch loss.
TEST_P(BertGradCache, EqualsFiniteDifferences) {
  const auto [pooling, train_layers] = GetParam();
  const ParamLayout layout(TinyBertConfig({24, 2, pooling, 0}));
  TrainParams<double> params = RandomParams<double>(layout, 31, 0.3, 0.3);
  TrainModel<double> model(params.layout, pooling);
  const ContrastiveBatch cb = TinyContrastiveBatch();
  GradCacheOptions options;
  options.chunk_size = 3;
  options.train_layers = train_layers;
  const int64_t begin = layout.TrainableBegin(train_layers);
  std::vector<double> grads(params.values.size() - begin, 0.0);
  const InfoNceResult res = GradCacheStep(model, params.values.data(), cb, options, grads.data());
  EXPECT_NEAR(res.loss, FullBatchLoss(model, params.values.data(), cb), 1e-12);
  auto loss = [&] { return FullBatchLoss(model, params.values.data(), cb); };
  const auto numeric =
      NumericGradient(loss, params.values.data() + begin, layout.total() - begin);
  for (const ParamEntry& e : layout.entries()) {
    if (e.offset < begin) continue;
    int64_t n = e.numel;
    if (e.name == "embeddings.token_type_embeddings.weight") n = 24;
    if (e.name == "embeddings.position_embeddings.weight") n = 6 * 24;  // longest is 6
    Check(e.name, grads.data() + (e.offset - begin), numeric.data() + (e.offset - begin), n);
  }
}

INSTANTIATE_TEST_SUITE_P(PoolingAndLayers, BertGradCache,
                         ::testing::Values(std::make_tuple(Pooling::kMean, 0),
                                           std::make_tuple(Pooling::kCls, 0),
                                           std::make_tuple(Pooling::kCls, 1)));

// Prints the worst relative error after every test has run.
class WorstErrorReporter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("worst norm-wise relative error of the BERT gradient checks run: %.3g (bound %.0e)\n",
                g_worst, kTol);
  }
};
[[maybe_unused]] ::testing::Environment* const kReporter =
    ::testing::AddGlobalTestEnvironment(new WorstErrorReporter);

}  // namespace
}  // namespace neodb::encoder::train
