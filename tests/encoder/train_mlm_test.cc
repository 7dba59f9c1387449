// MLM masking and head: masking statistics and determinism, the loss value,
// and the head's gradients against central finite differences in F64.
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "encoder/train/mlm_head.h"
#include "gtest/gtest.h"

namespace neodb::encoder::train {
namespace {

MlmMaskOptions Options() {
  MlmMaskOptions o;
  o.rate = 0.2;
  o.mask_id = 4;
  o.special_ids = {0, 1, 2, 3, 4};
  return o;
}

std::vector<int32_t> PackedIds(int sequences, int length) {
  std::vector<int32_t> ids;
  std::mt19937 rng(7);
  for (int s = 0; s < sequences; ++s) {
    ids.push_back(2);  // [CLS]
    for (int i = 0; i < length; ++i) ids.push_back(5 + static_cast<int32_t>(rng() % 1000));
    ids.push_back(3);  // [SEP]
  }
  return ids;
}

TEST(MaskTokens, MasksAboutTwentyPercentOfNonSpecialTokensWithMask) {
  const std::vector<int32_t> ids = PackedIds(400, 125);  // 50,000 maskable tokens
  const MaskedTokens m = MaskTokens(ids, Options(), 1);
  const double fraction = static_cast<double>(m.rows.size()) / 50000.0;
  EXPECT_NEAR(fraction, 0.2, 0.01);
  ASSERT_EQ(m.rows.size(), m.labels.size());
  ASSERT_EQ(m.input_ids.size(), ids.size());
  std::set<int64_t> rows(m.rows.begin(), m.rows.end());
  EXPECT_EQ(rows.size(), m.rows.size());
  for (size_t k = 0; k < m.rows.size(); ++k) {
    const int64_t r = m.rows[k];
    EXPECT_EQ(m.input_ids[r], 4);    // all replaced by [MASK], no 80/10/10
    EXPECT_EQ(m.labels[k], ids[r]);  // the label is the original token
    EXPECT_GE(ids[r], 5);            // never a special token
    if (k > 0) {
      EXPECT_LT(m.rows[k - 1], r);  // ascending
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!rows.count(static_cast<int64_t>(i))) {
      EXPECT_EQ(m.input_ids[i], ids[i]);
    }
  }
}

TEST(MaskTokens, DeterministicPerSeedAndDifferentAcrossSeeds) {
  const std::vector<int32_t> ids = PackedIds(10, 100);
  const MaskedTokens a = MaskTokens(ids, Options(), 42);
  const MaskedTokens b = MaskTokens(ids, Options(), 42);
  const MaskedTokens c = MaskTokens(ids, Options(), 43);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.input_ids, b.input_ids);
  EXPECT_NE(a.rows, c.rows);
}

TEST(MaskTokens, AlwaysMasksOneTokenWhenAnyIsMaskable) {
  const std::vector<int32_t> ids = {2, 77, 3};
  MlmMaskOptions o = Options();
  o.rate = 1e-9;
  const MaskedTokens m = MaskTokens(ids, o, 0);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.rows[0], 1);
  EXPECT_EQ(m.labels[0], 77);
  EXPECT_EQ(m.input_ids, (std::vector<int32_t>{2, 4, 3}));
  const std::vector<int32_t> only_specials = {2, 3, 0, 0};
  EXPECT_TRUE(MaskTokens(only_specials, o, 0).rows.empty());
}

TEST(MlmHeadLoss, UniformLogitsGiveLogVocab) {
  const int64_t c = 4, v = 11, rows = 3;
  std::vector<double> w(v * c, 0.0), bias(v, 0.5), hidden(rows * c, 1.0);
  const std::vector<int64_t> masked = {0, 2};
  const std::vector<int32_t> labels = {3, 10};
  const MlmLossResult r = MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows,
                                              masked, labels, nullptr, nullptr, nullptr);
  EXPECT_NEAR(r.loss, std::log(11.0), 1e-12);
  EXPECT_EQ(r.masked, 2);
}

TEST(MlmHeadLoss, CountsArgMaxHits) {
  const int64_t c = 2, v = 3, rows = 2;
  // weight rows: token 0 → (1,0), token 1 → (0,1), token 2 → (-1,-1).
  std::vector<double> w = {1, 0, 0, 1, -1, -1}, bias(v, 0.0);
  std::vector<double> hidden = {5, 0, 0, 5};  // row 0 predicts 0, row 1 predicts 1
  const std::vector<int64_t> masked = {0, 1};
  const std::vector<int32_t> labels = {0, 2};
  const MlmLossResult r = MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows,
                                              masked, labels, nullptr, nullptr, nullptr);
  EXPECT_EQ(r.correct, 1);
}

// Central differences of the loss in F64 against the analytic gradients.
TEST(MlmHeadLoss, GradientsMatchFiniteDifferences) {
  const int64_t c = 6, v = 9, rows = 7;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 0.7);
  std::vector<double> w(v * c), bias(v), hidden(rows * c);
  for (double& x : w) x = normal(rng);
  for (double& x : bias) x = normal(rng);
  for (double& x : hidden) x = normal(rng);
  const std::vector<int64_t> masked = {1, 2, 5};
  const std::vector<int32_t> labels = {4, 4, 0};  // a repeated label on purpose

  std::vector<double> dw(v * c, 0.0), db(v, 0.0), dh(rows * c, 0.0);
  MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows, masked, labels, dh.data(),
                      dw.data(), db.data());
  auto loss = [&] {
    return MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows, masked, labels,
                               nullptr, nullptr, nullptr)
        .loss;
  };
  const double eps = 1e-6;
  auto check = [&](std::vector<double>& param, const std::vector<double>& grad, const char* name) {
    for (size_t i = 0; i < param.size(); ++i) {
      const double saved = param[i];
      param[i] = saved + eps;
      const double up = loss();
      param[i] = saved - eps;
      const double down = loss();
      param[i] = saved;
      EXPECT_NEAR(grad[i], (up - down) / (2 * eps), 1e-7) << name << "[" << i << "]";
    }
  };
  check(w, dw, "weight");
  check(bias, db, "bias");
  check(hidden, dh, "hidden");
  // Unmasked rows get no gradient.
  for (int64_t k = 0; k < c; ++k) {
    EXPECT_EQ(dh[0 * c + k], 0.0);
    EXPECT_EQ(dh[6 * c + k], 0.0);
  }
}

TEST(MlmHeadLoss, GradientsAccumulateIntoOutputs) {
  const int64_t c = 3, v = 5, rows = 2;
  std::vector<double> w(v * c, 0.1), bias(v, 0.0), hidden(rows * c, 0.2);
  const std::vector<int64_t> masked = {1};
  const std::vector<int32_t> labels = {2};
  std::vector<double> db1(v, 0.0), db2(v, 0.0);
  MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows, masked, labels, nullptr,
                      nullptr, db1.data());
  db2 = db1;
  MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows, masked, labels, nullptr,
                      nullptr, db2.data());
  for (int64_t j = 0; j < v; ++j) EXPECT_NEAR(db2[j], 2 * db1[j], 1e-15);
}

TEST(MlmHeadLoss, FloatMatchesDouble) {
  const int64_t c = 16, v = 50, rows = 10;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 0.5);
  std::vector<double> w(v * c), bias(v), hidden(rows * c);
  for (double& x : w) x = normal(rng);
  for (double& x : bias) x = normal(rng);
  for (double& x : hidden) x = normal(rng);
  std::vector<float> wf(w.begin(), w.end()), bf(bias.begin(), bias.end()),
      hf(hidden.begin(), hidden.end());
  const std::vector<int64_t> masked = {0, 3, 4, 9};
  const std::vector<int32_t> labels = {1, 49, 7, 0};
  std::vector<double> dh(rows * c, 0.0);
  std::vector<float> dhf(rows * c, 0.0f);
  const double ld = MlmHeadLoss<double>({w.data(), bias.data(), v, c}, hidden.data(), rows, masked,
                                        labels, dh.data(), nullptr, nullptr)
                        .loss;
  const double lf = MlmHeadLoss<float>({wf.data(), bf.data(), v, c}, hf.data(), rows, masked,
                                       labels, dhf.data(), nullptr, nullptr)
                        .loss;
  EXPECT_NEAR(lf, ld, 1e-5);
  for (size_t i = 0; i < dh.size(); ++i) EXPECT_NEAR(dhf[i], dh[i], 1e-5);
}

}  // namespace
}  // namespace neodb::encoder::train
