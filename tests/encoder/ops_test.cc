// Each CPU op against a naive loop written from NEOBERT.md §3.
#include <cmath>
#include <vector>

#include "encoder/ops/attention.h"
#include "encoder/ops/embedding.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/pooling.h"
#include "encoder/ops/qkv_rope.h"
#include "encoder/ops/rms_norm.h"
#include "encoder/ops/swiglu.h"
#include "encoder/ops/vec_math_cpu.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder::ops {
namespace {

using testing::Prng;
using testing::RandomTensor;

void ExpectNear(const float* got, const std::vector<double>& want, double rel, const char* what) {
  double max_abs = 0;
  for (double w : want) max_abs = std::max(max_abs, std::abs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * std::max(max_abs, 1e-6)) << what << " at " << i;
  }
}

TEST(OpsTest, EmbeddingGathersRows) {
  Prng prng(1);
  Tensor table = RandomTensor({10, 7}, 1, prng);
  std::vector<int32_t> ids = {3, 0, 9, 3};
  Tensor out = Tensor::Empty({4, 7}, DType::kF32);
  Embedding(table, ids, &out);
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 7; ++c)
      EXPECT_EQ(out.data<float>()[i * 7 + c], table.data<float>()[ids[i] * 7 + c]);
}

TEST(OpsTest, RmsNormMatchesNaive) {
  Prng prng(2);
  const int64_t rows = 5, cols = 37;  // odd width exercises the tail loop
  Tensor x = RandomTensor({rows, cols}, 300, prng);
  Tensor w = RandomTensor({cols}, 0.5, prng, 1.0f);
  Tensor out = Tensor::Empty({rows, cols}, DType::kF32);
  RmsNorm(x, w, 1e-5f, &out);
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c)
      ss += double(x.data<float>()[r * cols + c]) * x.data<float>()[r * cols + c];
    const double s = 1 / std::sqrt(ss / cols + 1e-5);
    for (int64_t c = 0; c < cols; ++c)
      want.push_back(x.data<float>()[r * cols + c] * s * w.data<float>()[c]);
  }
  ExpectNear(out.data<float>(), want, 1e-6, "rmsnorm");
  // In place gives the same result.
  RmsNorm(x, w, 1e-5f, &x);
  ExpectNear(x.data<float>(), want, 1e-6, "rmsnorm in place");
}

// A BLAS GEMM may sum in any order, with or without FMA, depending on the
// kernel the CPU gets. The tolerance is therefore the classic bound for any
// order of a float sum of n terms, |fl(sum) - sum| <= gamma_n * sum |term|,
// gamma_n = n u / (1 - n u), u = 2^-24 — never what one machine printed.
TEST(OpsTest, LinearAndAccumulateMatchNaive) {
  Prng prng(3);
  const int64_t n = 9, k = 33, m = 17;
  Tensor x = RandomTensor({n, k}, 1, prng);
  Tensor w = RandomTensor({m, k}, 1, prng);
  Tensor out = RandomTensor({n, m}, 1, prng);
  std::vector<double> base(out.data<float>(), out.data<float>() + n * m);
  std::vector<double> prod(n * m), abs_sum(n * m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t e = 0; e < k; ++e) {
        const double t = double(x.data<float>()[i * k + e]) * w.data<float>()[j * k + e];
        prod[i * m + j] += t;
        abs_sum[i * m + j] += std::abs(t);
      }
  auto gamma = [](int64_t terms) {
    const double u = 0x1p-24;
    return terms * u / (1 - terms * u);
  };
  Linear(x, w, /*accumulate=*/true, &out);
  for (int64_t i = 0; i < n * m; ++i) {
    const double want = base[i] + prod[i];
    ASSERT_NEAR(out.data<float>()[i], want, gamma(k + 1) * (abs_sum[i] + std::abs(base[i])))
        << "linear accumulate at " << i;
  }
  Linear(x, w, /*accumulate=*/false, &out);
  for (int64_t i = 0; i < n * m; ++i) {
    ASSERT_NEAR(out.data<float>()[i], prod[i], gamma(k) * abs_sum[i]) << "linear at " << i;
  }
}

TEST(OpsTest, SplitQkvRopeMatchesNaive) {
  Prng prng(4);
  const int64_t heads = 3, d = 8, c = heads * d;
  const std::vector<int64_t> offsets = {0, 5, 6, 13};
  const int64_t n = offsets.back();
  Tensor qkv = RandomTensor({n, 3 * c}, 1, prng);
  RopeTable rope = MakeRopeTable(64, d, 10000.0);
  Tensor q = Tensor::Empty({heads, n, d}, DType::kF32), k = q.Clone(), v = q.Clone();
  SplitQkvRope(qkv, offsets, heads, rope, &q, &k, &v);
  std::vector<double> wq, wk, wv;
  for (int64_t h = 0; h < heads; ++h) {
    for (size_t b = 0; b + 1 < offsets.size(); ++b) {
      for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
        const int64_t p = t - offsets[b];  // positions restart per sequence
        const float* src = qkv.data<float>() + t * 3 * c + h * 3 * d;  // head-interleaved
        for (int64_t i = 0; i < d / 2; ++i) {
          const double a =
              double(float(p) * float(1.0 / std::pow(10000.0, double(float(2 * i) / float(d)))));
          for (int part = 0; part < 2; ++part) {
            const float* s = src + part * d;
            auto& dst = part == 0 ? wq : wk;
            dst.push_back(s[2 * i] * std::cos(a) - s[2 * i + 1] * std::sin(a));
            dst.push_back(s[2 * i] * std::sin(a) + s[2 * i + 1] * std::cos(a));
          }
        }
        for (int64_t e = 0; e < d; ++e) wv.push_back(src[2 * d + e]);
      }
    }
  }
  ExpectNear(q.data<float>(), wq, 1e-6, "q");
  ExpectNear(k.data<float>(), wk, 1e-6, "k");
  ExpectNear(v.data<float>(), wv, 0, "v");
}

TEST(OpsTest, RopeTableFollowsTheF32AngleRecipe) {
  RopeTable rope = MakeRopeTable(4096, 64, 10000.0);
  // Position 4095, pair 0: angle exactly 4095 rad.
  EXPECT_FLOAT_EQ(rope.cos.data<float>()[4095 * 32], float(std::cos(4095.0)));
  EXPECT_FLOAT_EQ(rope.sin.data<float>()[4095 * 32], float(std::sin(4095.0)));
  EXPECT_EQ(rope.cos.data<float>()[0], 1.0f);
  EXPECT_EQ(rope.sin.data<float>()[31], 0.0f);
}

// Attention with sequences long enough to need several score blocks.
TEST(OpsTest, AttentionMatchesNaivePerSequence) {
  Prng prng(5);
  const int64_t heads = 2, d = 16;
  const int64_t long_len = 1500;
  const std::vector<int64_t> offsets = {0, 3, 3 + long_len, 3 + long_len + 40};
  const int64_t n = offsets.back();
  Tensor q = RandomTensor({heads, n, d}, 2, prng);
  Tensor k = RandomTensor({heads, n, d}, 2, prng);
  Tensor v = RandomTensor({heads, n, d}, 1, prng);
  Tensor out = Tensor::Empty({n, heads * d}, DType::kF32);
  Tensor scratch = Tensor::Empty({AttentionScratchSize(long_len)}, DType::kF32);
  ASSERT_LT(AttentionScoreRows(long_len), long_len);  // blocked path exercised
  const float scale = 0.25f;
  Attention(q, k, v, offsets, scale, &scratch, &out);
  const float* Q = q.data<float>();
  const float* K = k.data<float>();
  const float* V = v.data<float>();
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    const int64_t lo = offsets[b], hi = offsets[b + 1];
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t t = lo; t < hi; t += (hi - lo > 50 ? 97 : 1)) {
        std::vector<double> s(hi - lo);
        double m = -1e300, z = 0;
        for (int64_t j = lo; j < hi; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += double(Q[(h * n + t) * d + e]) * K[(h * n + j) * d + e];
          s[j - lo] = dot * scale;
          m = std::max(m, s[j - lo]);
        }
        for (double& e : s) z += (e = std::exp(e - m));
        for (int64_t e = 0; e < d; ++e) {
          double acc = 0;
          for (int64_t j = lo; j < hi; ++j) acc += s[j - lo] / z * V[(h * n + j) * d + e];
          ASSERT_NEAR(out.data<float>()[t * heads * d + h * d + e], acc, 2e-5)
              << "seq " << b << " head " << h << " token " << t;
        }
      }
    }
  }
}

TEST(OpsTest, SoftmaxHandlesExtremesAndTails) {
  for (int64_t n : {1, 15, 16, 17, 100, 4096}) {
    std::vector<float> x(n);
    Prng prng(n);
    for (auto& e : x) e = prng.Uniform(200);  // differences beyond exp's range
    std::vector<double> want(n);
    double m = -1e300, z = 0;
    for (float e : x) m = std::max(m, double(e));
    for (int64_t i = 0; i < n; ++i) z += (want[i] = std::exp(x[i] - m));
    for (auto& e : want) e /= z;
    cpu::SoftmaxRowInplace(x.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(x[i], want[i], 1e-6 + 1e-5 * want[i]) << n << " " << i;
  }
}

// Every exp body this CPU can run (scalar, AVX2+FMA, AVX-512) against double.
TEST(OpsTest, EveryVectorBodyMatchesDouble) {
  using cpu::VecIsa;
  for (VecIsa isa : {VecIsa::kScalar, VecIsa::kAvx2, VecIsa::kAvx512}) {
    if (!cpu::VecIsaAvailable(isa)) continue;
    SCOPED_TRACE(cpu::VecIsaName(isa));
    for (int64_t n : {1, 7, 8, 9, 16, 33, 1000}) {
      std::vector<float> x(n);
      Prng prng(n + 1000);
      for (auto& e : x) e = prng.Uniform(120);  // exp under/overflow territory
      double m = -1e300;
      for (float e : x) m = std::max(m, double(e));
      std::vector<double> want(n);
      double want_sum = 0;
      for (int64_t i = 0; i < n; ++i) want_sum += (want[i] = std::exp(x[i] - m));
      const float sum = cpu::internal::ExpShiftRowInplace(isa, x.data(), n);
      ASSERT_NEAR(sum, want_sum, 2e-6 * want_sum) << n;
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(x[i], want[i], 1e-6 * want[i] + 1e-30) << n << " " << i;

      std::vector<float> g(n), l(n), out(n);
      for (int64_t i = 0; i < n; ++i) {
        g[i] = prng.Uniform(120);
        l[i] = prng.Uniform(2);
      }
      cpu::internal::SiluMul(isa, g.data(), l.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double w = g[i] / (1 + std::exp(-double(g[i]))) * l[i];
        ASSERT_NEAR(out[i], w, 1e-6 * std::abs(w) + 1e-30) << n << " " << i;
      }
    }
  }
}

TEST(OpsTest, SwiGluGatesTheFirstHalf) {
  Prng prng(6);
  const int64_t rows = 3, f = 45;
  Tensor u = RandomTensor({rows, 2 * f}, 30, prng);  // exp over- and underflow regions
  Tensor out = Tensor::Empty({rows, f}, DType::kF32);
  SwiGlu(u, &out);
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < f; ++i) {
      const double g = u.data<float>()[r * 2 * f + i], l = u.data<float>()[r * 2 * f + f + i];
      want.push_back(g / (1 + std::exp(-g)) * l);
    }
  ExpectNear(out.data<float>(), want, 1e-6, "swiglu");
}

TEST(OpsTest, PoolClsAndMean) {
  Prng prng(7);
  const std::vector<int64_t> offsets = {0, 1, 4, 9};
  const int64_t c = 5;
  Tensor hidden = RandomTensor({9, c}, 10, prng);
  Tensor out = Tensor::Empty({3, c}, DType::kF32);
  Pool(hidden, offsets, Pooling::kCls, &out);
  for (int b = 0; b < 3; ++b)
    for (int e = 0; e < c; ++e)
      EXPECT_EQ(out.data<float>()[b * c + e], hidden.data<float>()[offsets[b] * c + e]);
  Pool(hidden, offsets, Pooling::kMean, &out);
  for (int b = 0; b < 3; ++b)
    for (int e = 0; e < c; ++e) {
      double s = 0;
      for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) s += hidden.data<float>()[t * c + e];
      EXPECT_NEAR(out.data<float>()[b * c + e], s / (offsets[b + 1] - offsets[b]), 1e-5);
    }
}

}  // namespace
}  // namespace neodb::encoder::ops
