// Finite-difference gradient checks (F64, relative error ≤ 1e-3) for every
// training op, for the whole tiny model and for the InfoNCE loss end to end,
// plus the GradCache-equals-full-batch property.
#include <gtest/gtest.h>

#include <numeric>

#include "encoder/train/attention.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/grad_cache.h"
#include "encoder/train/info_nce.h"
#include "encoder/train/linear.h"
#include "encoder/train/rms_norm.h"
#include "encoder/train/rope.h"
#include "encoder/train/swiglu.h"
#include "encoder/train/train_model.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

using testing::ExpectGradientsClose;
using testing::NumericGradient;
using testing::RandomVector;
using testing::TinyConfig;

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

TEST(TrainGradcheck, RmsNorm) {
  const int64_t rows = 3, cols = 6;
  std::vector<double> x = RandomVector(rows * cols, 1, 2.0);
  std::vector<double> w = RandomVector(cols, 2);
  const std::vector<double> r = RandomVector(rows * cols, 3);
  std::vector<double> y(x.size()), rstd(rows);
  auto loss = [&] {
    RmsNormForward(x.data(), w.data(), rows, cols, 1e-5, y.data(), rstd.data());
    return Dot(y, r);
  };
  loss();
  std::vector<double> dx(x.size(), 0.0), dw(cols, 0.0);
  RmsNormBackward(x.data(), w.data(), rstd.data(), r.data(), rows, cols, dx.data(), dw.data());
  const auto nx = NumericGradient(loss, x.data(), rows * cols);
  const auto nw = NumericGradient(loss, w.data(), cols);
  ExpectGradientsClose("dx", dx.data(), nx.data(), rows * cols);
  ExpectGradientsClose("dw", dw.data(), nw.data(), cols);
}

TEST(TrainGradcheck, Linear) {
  const int64_t rows = 4, in = 5, out = 3;
  std::vector<double> x = RandomVector(rows * in, 4);
  std::vector<double> w = RandomVector(out * in, 5);
  const std::vector<double> r = RandomVector(rows * out, 6);
  std::vector<double> y(rows * out);
  auto loss = [&] {
    LinearForward(x.data(), w.data(), rows, in, out, y.data());
    return Dot(y, r);
  };
  std::vector<double> dx(x.size(), 0.0), dw(w.size(), 0.0);
  LinearBackward(x.data(), w.data(), r.data(), rows, in, out, dx.data(), dw.data());
  const auto nx = NumericGradient(loss, x.data(), rows * in);
  const auto nw = NumericGradient(loss, w.data(), out * in);
  ExpectGradientsClose("dx", dx.data(), nx.data(), rows * in);
  ExpectGradientsClose("dw", dw.data(), nw.data(), out * in);
}

TEST(TrainGradcheck, RopeForwardMatchesFormulaAndBackwardIsInverse) {
  // Two heads of D=4 inside a row of width 12 (as q sits inside fused QKV).
  const int64_t rows = 3, ld = 12, d = 4;
  RopeTable<double> table(8, d, 10000.0);
  const std::vector<int32_t> pos = {0, 1, 5};
  std::vector<double> x = RandomVector(rows * ld, 7);
  const std::vector<double> r = RandomVector(rows * ld, 8);
  // Formula check on one element: row 2 (p=5), head 1 (col 6), pair i=1.
  std::vector<double> y = x;
  RopeApply(y.data(), rows, ld, pos.data(), 2, 0, 6, table, false);
  const double angle = 5 * std::pow(10000.0, -2.0 * 1 / d);
  const double a = x[2 * ld + 6 + 2], b = x[2 * ld + 6 + 3];
  EXPECT_NEAR(y[2 * ld + 6 + 2], a * std::cos(angle) - b * std::sin(angle), 1e-12);
  EXPECT_NEAR(y[2 * ld + 6 + 3], a * std::sin(angle) + b * std::cos(angle), 1e-12);
  EXPECT_EQ(y[2 * ld + 4], x[2 * ld + 4]);  // columns outside the heads untouched
  auto loss = [&] {
    std::vector<double> z = x;
    RopeApply(z.data(), rows, ld, pos.data(), 2, 0, 6, table, false);
    return Dot(z, r);
  };
  std::vector<double> dx = r;
  RopeApply(dx.data(), rows, ld, pos.data(), 2, 0, 6, table, true);
  const auto nx = NumericGradient(loss, x.data(), rows * ld);
  ExpectGradientsClose("dx", dx.data(), nx.data(), rows * ld);
}

TEST(TrainGradcheck, AttentionPackedBatch) {
  const int64_t heads = 2, d = 4, c = heads * d;
  const std::vector<int64_t> offsets = {0, 3, 7, 8};  // lengths 3, 4, 1
  const int64_t rows = offsets.back();
  std::vector<double> qkv = RandomVector(rows * 3 * c, 9, 1.5);
  const std::vector<double> r = RandomVector(rows * c, 10);
  std::vector<double> o(rows * c), lse(rows * heads);
  auto loss = [&] {
    AttentionForward(qkv.data(), offsets.data(), 3, heads, d, o.data(), lse.data());
    return Dot(o, r);
  };
  loss();
  std::vector<double> dqkv(qkv.size());
  AttentionBackward(qkv.data(), o.data(), lse.data(), r.data(), offsets.data(), 3, heads, d,
                    dqkv.data());
  const auto n = NumericGradient(loss, qkv.data(), rows * 3 * c);
  ExpectGradientsClose("dqkv", dqkv.data(), n.data(), rows * 3 * c);
  // Sequences do not see each other: the output of sequence 0 does not depend
  // on sequence 1's values.
  std::vector<double> before(o.begin(), o.begin() + 3 * c);
  qkv[4 * 3 * c + 2 * d] += 1.0;  // a v entry of sequence 1
  loss();
  for (int64_t i = 0; i < 3 * c; ++i) EXPECT_EQ(o[i], before[i]);
}

TEST(TrainGradcheck, SwiGlu) {
  const int64_t rows = 3, f = 5;
  std::vector<double> u = RandomVector(rows * 2 * f, 11, 3.0);
  const std::vector<double> r = RandomVector(rows * f, 12);
  std::vector<double> s(rows * f);
  auto loss = [&] {
    SwiGluForward(u.data(), rows, f, s.data());
    return Dot(s, r);
  };
  loss();
  // The first half is gated: s = silu(u[0]) * u[f].
  const double g = u[0], l = u[f];
  EXPECT_NEAR(s[0], g / (1 + std::exp(-g)) * l, 1e-12);
  std::vector<double> du(u.size());
  SwiGluBackward(u.data(), r.data(), rows, f, du.data());
  const auto n = NumericGradient(loss, u.data(), rows * 2 * f);
  ExpectGradientsClose("du", du.data(), n.data(), rows * 2 * f);
}

TEST(TrainGradcheck, EmbeddingAndMeanPooling) {
  const int64_t vocab = 6, dim = 3;
  const std::vector<int32_t> ids = {1, 4, 1, 2, 5};  // repeated id 1
  const std::vector<int64_t> offsets = {0, 2, 5};
  std::vector<double> table = RandomVector(vocab * dim, 13);
  const std::vector<double> r = RandomVector(2 * dim, 14);
  auto loss = [&] {
    std::vector<double> x(ids.size() * dim), pooled(2 * dim);
    EmbeddingForward(ids.data(), 5, table.data(), dim, x.data());
    MeanPoolForward(x.data(), offsets.data(), 2, dim, pooled.data());
    return Dot(pooled, r);
  };
  std::vector<double> dx(ids.size() * dim, 0.0), dtable(table.size(), 0.0);
  MeanPoolBackward(r.data(), offsets.data(), 2, dim, dx.data());
  EmbeddingBackward(ids.data(), 5, dx.data(), dim, dtable.data());
  const auto n = NumericGradient(loss, table.data(), vocab * dim);
  ExpectGradientsClose("dtable", dtable.data(), n.data(), vocab * dim);
  for (int64_t c = 0; c < dim; ++c) EXPECT_EQ(dtable[c], 0.0);  // id 0 unused
}

// InfoNce on random queries [3, 5], positives [3, 5] and negatives [2, 5]
// (seeds seed, seed + 1, seed + 2), with `excluded` ([3, 5], empty = none):
// its gradients against finite differences and its loss against a direct
// evaluation over the candidates kept. Returns the result, d negatives in dn.
InfoNceResult CheckInfoNce(uint64_t seed, const std::vector<uint8_t>& excluded,
                           std::vector<double>* dn) {
  const int64_t b = 3, m = 2, dim = 5, cand = b + m;
  std::vector<double> q = RandomVector(b * dim, seed), p = RandomVector(b * dim, seed + 1),
                      n = RandomVector(m * dim, seed + 2);
  const uint8_t* out = excluded.empty() ? nullptr : excluded.data();
  std::vector<double> dq(q.size()), dp(p.size());
  dn->assign(n.size(), 0.0);
  auto loss = [&] {
    std::vector<double> a(q.size()), bb(p.size()), cc(n.size());
    return InfoNce(q.data(), p.data(), b, n.data(), m, dim, 0.07, a.data(), bb.data(), cc.data(),
                   out)
        .loss;
  };
  const InfoNceResult res =
      InfoNce(q.data(), p.data(), b, n.data(), m, dim, 0.07, dq.data(), dp.data(), dn->data(), out);
  ExpectGradientsClose("dq", dq.data(), NumericGradient(loss, q.data(), b * dim).data(), b * dim);
  ExpectGradientsClose("dp", dp.data(), NumericGradient(loss, p.data(), b * dim).data(), b * dim);
  ExpectGradientsClose("dn", dn->data(), NumericGradient(loss, n.data(), m * dim).data(), m * dim);
  auto cosine = [&](const double* x, const double* y) {
    double xy = 0, xx = 0, yy = 0;
    for (int64_t c = 0; c < dim; ++c) xy += x[c] * y[c], xx += x[c] * x[c], yy += y[c] * y[c];
    return xy / std::sqrt(xx * yy);
  };
  double total = 0;
  for (int64_t i = 0; i < b; ++i) {
    double z = 0;
    for (int64_t j = 0; j < cand; ++j) {
      if (out != nullptr && out[i * cand + j] != 0) continue;
      const double* c = j < b ? &p[j * dim] : &n[(j - b) * dim];
      z += std::exp(cosine(&q[i * dim], c) / 0.07);
    }
    total += -(cosine(&q[i * dim], &p[i * dim]) / 0.07 - std::log(z));
  }
  EXPECT_NEAR(res.loss, total / b, 1e-10);
  return res;
}

TEST(TrainGradcheck, InfoNce) {
  std::vector<double> dn;
  const InfoNceResult res = CheckInfoNce(15, {}, &dn);
  EXPECT_GT(res.loss, 0);
  EXPECT_EQ(res.excluded, 0);
}

// Known positives of a query (in-batch false negatives) are left out of its
// softmax: the loss is the one over the candidates kept, its gradient too.
TEST(TrainGradcheck, InfoNceLeavesOutExcludedCandidates) {
  const int64_t cand = 5;  // 3 positives + 2 negatives
  std::vector<uint8_t> excluded(3 * cand, 0);
  excluded[0 * cand + 1] = 1;  // query 0: positive 1 is its document too
  excluded[0 * cand + 3] = 1;  //          and so is negative 0
  excluded[2 * cand + 4] = 1;  // query 2: negative 1
  std::vector<double> dn, dn_plain;
  const InfoNceResult res = CheckInfoNce(25, excluded, &dn);
  EXPECT_EQ(res.excluded, 3);
  const InfoNceResult plain = CheckInfoNce(25, {}, &dn_plain);
  EXPECT_GT(plain.loss, res.loss);  // leaving candidates out only lowers a row's normaliser
  // Negative 1 is now a candidate of queries 0 and 1 only: its gradient changed.
  EXPECT_NE(dn[5], dn_plain[5]);
}

PackedBatch TinyBatch() {
  PackedBatch batch;
  batch.offsets = {0};
  AppendSequence(&batch, {1, 7, 9, 2});
  AppendSequence(&batch, {1, 3, 3, 12, 30, 2});
  AppendSequence(&batch, {1, 2});
  return batch;
}

// The whole model, loss = a random linear functional of the pooled output:
// every parameter of the tiny model is checked.
TEST(TrainGradcheck, WholeModelPooledOutput) {
  const NeoBertConfig config = TinyConfig();
  TrainParams<double> params = RandomParams<double>(config, 21, 0.3, 0.3);
  TrainModel<double> model(params.layout);
  const PackedBatch batch = TinyBatch();
  const int64_t c = config.hidden_size;
  const std::vector<double> r = RandomVector(batch.batch_size() * c, 22);
  std::vector<double> pooled(batch.batch_size() * c);
  auto loss = [&] {
    model.Forward(params.values.data(), batch, 0, nullptr, Pooling::kMean, pooled.data(), nullptr);
    return Dot(pooled, r);
  };
  TrainModel<double>::Activations acts;
  model.Forward(params.values.data(), batch, 0, nullptr, Pooling::kMean, pooled.data(), &acts);
  std::vector<double> grads(params.values.size(), 0.0);
  model.Backward(params.values.data(), batch, acts, r.data(), 0, grads.data());
  const auto numeric = NumericGradient(loss, params.values.data(), params.layout.total());
  for (const ParamEntry& e : params.layout.entries()) {
    ExpectGradientsClose(e.name, grads.data() + e.offset, numeric.data() + e.offset, e.numel, 1e-3,
                         1e-7);
  }
  // Top layer only: the gradient of the trained tail is the same.
  const int64_t begin = params.layout.TrainableBegin(1);
  ASSERT_GT(begin, 0);
  std::vector<double> tail(params.values.size() - begin, 0.0);
  model.Backward(params.values.data(), batch, acts, r.data(), begin, tail.data());
  for (size_t i = 0; i < tail.size(); ++i) EXPECT_NEAR(tail[i], grads[begin + i], 1e-12);
}

ContrastiveBatch TinyContrastiveBatch() {
  ContrastiveBatch b;
  b.queries = {{1, 5, 6, 2}, {1, 8, 2}, {1, 9, 10, 11, 2}};
  b.positives = {{1, 15, 16, 17, 2}, {1, 18, 19, 2}, {1, 20, 2}};
  b.negatives = {{1, 21, 22, 2}, {1, 23, 24, 25, 26, 2}};
  return b;
}

// The plain full-batch gradient: one forward with activations over every
// text, InfoNCE, one backward.
InfoNceResult FullBatchGradient(const TrainModel<double>& model, const double* params,
                                const ContrastiveBatch& cb, int64_t grad_begin, double* grads) {
  const int64_t c = model.layout().config().hidden_size;
  PackedBatch all;
  all.offsets = {0};
  for (int64_t t = 0; t < cb.num_texts(); ++t) AppendSequence(&all, cb.text(t));
  const int64_t b = static_cast<int64_t>(cb.queries.size());
  const int64_t n = cb.num_texts();
  std::vector<double> emb(n * c), d_emb(n * c);
  TrainModel<double>::Activations acts;
  model.Forward(params, all, 0, nullptr, Pooling::kMean, emb.data(), &acts);
  const InfoNceResult res =
      InfoNce(emb.data(), emb.data() + b * c, b, emb.data() + 2 * b * c, n - 2 * b, c, 0.07,
              d_emb.data(), d_emb.data() + b * c, d_emb.data() + 2 * b * c,
              cb.excluded.empty() ? nullptr : cb.excluded.data());
  model.Backward(params, all, acts, d_emb.data(), grad_begin, grads);
  return res;
}

TEST(TrainGradcheck, InfoNceEndToEndThroughGradCache) {
  const NeoBertConfig config = TinyConfig();
  TrainParams<double> params = RandomParams<double>(config, 31, 0.3, 0.3);
  TrainModel<double> model(params.layout);
  const ContrastiveBatch cb = TinyContrastiveBatch();
  GradCacheOptions options;
  options.chunk_size = 3;  // 8 texts → chunks of 3, 3, 2
  std::vector<double> grads(params.values.size(), 0.0);
  GradCacheStep(model, params.values.data(), cb, options, grads.data());
  auto loss = [&] {
    std::vector<double> scratch(params.values.size(), 0.0);
    return FullBatchGradient(model, params.values.data(), cb, 0, scratch.data()).loss;
  };
  const auto numeric = NumericGradient(loss, params.values.data(), params.layout.total());
  for (const ParamEntry& e : params.layout.entries()) {
    ExpectGradientsClose(e.name, grads.data() + e.offset, numeric.data() + e.offset, e.numel, 1e-3,
                         1e-7);
  }
}

class GradCacheEqualsFullBatch : public ::testing::TestWithParam<std::tuple<int64_t, int64_t>> {};

TEST_P(GradCacheEqualsFullBatch, TightTolerance) {
  const auto [chunk_size, train_layers] = GetParam();
  const NeoBertConfig config = TinyConfig();
  TrainParams<double> params = RandomParams<double>(config, 41, 0.3, 0.3);
  TrainModel<double> model(params.layout);
  const ContrastiveBatch cb = TinyContrastiveBatch();
  const int64_t begin = params.layout.TrainableBegin(train_layers);
  std::vector<double> full(params.values.size() - begin, 0.0);
  const InfoNceResult ref = FullBatchGradient(model, params.values.data(), cb, begin, full.data());
  GradCacheOptions options;
  options.chunk_size = chunk_size;
  options.train_layers = train_layers;
  std::vector<double> cached(full.size(), 0.0);
  const InfoNceResult got = GradCacheStep(model, params.values.data(), cb, options, cached.data());
  EXPECT_NEAR(got.loss, ref.loss, 1e-12);
  double max_abs = 0;
  for (double g : full) max_abs = std::max(max_abs, std::fabs(g));
  ASSERT_GT(max_abs, 1e-6);
  for (size_t i = 0; i < full.size(); ++i) {
    ASSERT_NEAR(cached[i], full[i], 1e-10 * max_abs) << "param " << begin + i;
  }
}

// GradCache passes the batch's known positives to the loss: its gradient is
// the full-batch gradient of the loss with them left out, and not the one
// with them in.
TEST(TrainGradcheck, GradCacheLeavesOutTheBatchsKnownPositives) {
  const NeoBertConfig config = TinyConfig();
  TrainParams<double> params = RandomParams<double>(config, 43, 0.3, 0.3);
  TrainModel<double> model(params.layout);
  ContrastiveBatch cb = TinyContrastiveBatch();  // 3 queries, 3 + 2 candidates
  const std::vector<double> plain = [&] {
    std::vector<double> g(params.values.size(), 0.0);
    GradCacheStep(model, params.values.data(), cb, GradCacheOptions{}, g.data());
    return g;
  }();
  cb.excluded.assign(3 * 5, 0);
  cb.excluded[1 * 5 + 0] = 1;  // query 1: positive 0 is also its
  cb.excluded[2 * 5 + 4] = 1;  // query 2: negative 1 is also its
  std::vector<double> full(params.values.size(), 0.0);
  const InfoNceResult ref = FullBatchGradient(model, params.values.data(), cb, 0, full.data());
  EXPECT_EQ(ref.excluded, 2);
  GradCacheOptions options;
  options.chunk_size = 3;
  std::vector<double> cached(full.size(), 0.0);
  const InfoNceResult got = GradCacheStep(model, params.values.data(), cb, options, cached.data());
  EXPECT_EQ(got.excluded, 2);
  EXPECT_NEAR(got.loss, ref.loss, 1e-12);
  double max_abs = 0, max_diff_from_plain = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(full[i]));
    max_diff_from_plain = std::max(max_diff_from_plain, std::fabs(full[i] - plain[i]));
  }
  ASSERT_GT(max_abs, 1e-6);
  EXPECT_GT(max_diff_from_plain, 1e-3 * max_abs);
  for (size_t i = 0; i < full.size(); ++i) ASSERT_NEAR(cached[i], full[i], 1e-10 * max_abs) << i;
}

// The F32 instantiation (the one that trains) computes what the F64 one does.
TEST(TrainGradcheck, F32MatchesF64) {
  const NeoBertConfig config = TinyConfig();
  TrainParams<double> p64 = RandomParams<double>(config, 51, 0.3, 0.3);
  TrainParams<float> p32(config);
  for (size_t i = 0; i < p64.values.size(); ++i) p32.values[i] = static_cast<float>(p64.values[i]);
  for (size_t i = 0; i < p64.values.size(); ++i) p64.values[i] = p32.values[i];
  TrainModel<double> m64(p64.layout);
  TrainModel<float> m32(p32.layout);
  const ContrastiveBatch cb = TinyContrastiveBatch();
  GradCacheOptions options;
  options.chunk_size = 3;
  std::vector<double> g64(p64.values.size(), 0.0);
  std::vector<float> g32(p32.values.size(), 0.0f);
  const double l64 = GradCacheStep(m64, p64.values.data(), cb, options, g64.data()).loss;
  const double l32 = GradCacheStep(m32, p32.values.data(), cb, options, g32.data()).loss;
  EXPECT_NEAR(l32, l64, 1e-4 * std::fabs(l64));
  std::vector<double> g32d(g32.begin(), g32.end());
  EXPECT_LE(testing::RelativeError(g32d.data(), g64.data(), static_cast<int64_t>(g64.size())),
            1e-3);
}

INSTANTIATE_TEST_SUITE_P(Chunks, GradCacheEqualsFullBatch,
                         ::testing::Values(std::make_tuple(int64_t{1}, int64_t{0}),
                                           std::make_tuple(int64_t{3}, int64_t{0}),
                                           std::make_tuple(int64_t{100}, int64_t{0}),
                                           std::make_tuple(int64_t{2}, int64_t{1})));

}  // namespace
}  // namespace neodb::encoder::train
