// BF16 and INT8 matmuls against F32: the op with error bounds derived from
// the rounding of each format, and the whole CPU forward pass on small random
// checkpoints (mixed lengths, both poolings) with the cosine thresholds of
// issue 16 (BF16 ≥ 0.999, INT8 ≥ 0.99 per vector). A host without the
// instructions skips the reduced-precision cases (precision_fallback_test
// covers what such a host does instead).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "encoder/backend.h"
#include "encoder/checkpoint/config.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/low_precision_linear.h"
#include "encoder/ops/pooling.h"
#include "encoder/ops/vec_math_cpu.h"
#include "gtest/gtest.h"
#include "tests/encoder/precision_test_util.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder {
namespace {

#define SKIP_UNLESS_HOST_RUNS_EITHER()                                     \
  do {                                                                     \
    std::string why_bf16, why_int8;                                        \
    if (CpuPrecisionFor(Precision::kBf16, &why_bf16) != Precision::kBf16 && \
        CpuPrecisionFor(Precision::kInt8, &why_int8) != Precision::kInt8) { \
      GTEST_SKIP() << why_bf16 << "; " << why_int8;                        \
    }                                                                      \
  } while (0)

#define SKIP_UNLESS_HOST_RUNS(p)                                             \
  do {                                                                       \
    std::string why;                                                         \
    if (CpuPrecisionFor(p, &why) != (p)) GTEST_SKIP() << why;                \
  } while (0)

// x [n, k]: rows of different ranges, some all-positive (a nonzero INT8 zero
// point), one all-zero, one with a single large outlier.
Tensor Activations(int64_t n, int64_t k, uint64_t seed) {
  testing::Prng prng(seed);
  Tensor x = Tensor::Empty({n, k}, DType::kF32);
  float* p = x.data<float>();
  for (int64_t m = 0; m < n; ++m) {
    const float scale = 0.1f + static_cast<float>(m % 7);
    const float center = (m % 3 == 1) ? 2.0f * scale : 0.0f;
    for (int64_t i = 0; i < k; ++i) p[m * k + i] = center + prng.Uniform(scale);
    if (m % 5 == 4) std::fill(p + m * k, p + (m + 1) * k, 0.0f);
    if (m % 11 == 6) p[m * k + (m % k)] = 40.0f * scale;
  }
  return x;
}

// Worst-case error of the reduced-precision product against the exact one,
// plus F32 accumulation error on both sides (γ_k = k·2⁻²⁴ relative to Σ|x||w|).
std::vector<double> ErrorBounds(const Tensor& x, const Tensor& w, Precision p) {
  const int64_t n = x.dim(0), k = x.dim(1), out = w.dim(0);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  const double accum = 2.0 * static_cast<double>(k + 2) * std::ldexp(1.0, -24);
  std::vector<double> bound(n * out);
  for (int64_t m = 0; m < n; ++m) {
    const float* row = xp + m * k;
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < k; ++i) lo = std::min<double>(lo, row[i]), hi = std::max<double>(hi, row[i]);
    const double sx = hi > lo ? (hi - lo) / 255.0 : 1.0;
    for (int64_t j = 0; j < out; ++j) {
      const float* wr = wp + j * k;
      double amax = 0, abs_sum = 0, x_abs = 0, w_abs = 0;
      for (int64_t i = 0; i < k; ++i) {
        amax = std::max<double>(amax, std::fabs(wr[i]));
        abs_sum += std::fabs(double{row[i]} * wr[i]);
        x_abs += std::fabs(row[i]);
        w_abs += std::fabs(wr[i]);
      }
      double b = accum * abs_sum;
      if (p == Precision::kBf16) {
        const double u = std::ldexp(1.0, -8);  // BF16 unit roundoff 2⁻⁹, ×2 operands, margin
        b += (u + u * u) * abs_sum * (1 + accum);
      } else {
        const double sw = amax > 0 ? amax / 127.0 : 1.0;
        // |x − sx·(xq − zx)| ≤ sx/2, |w − sw·wq| ≤ sw/2, and the product of both.
        b += 0.5 * sw * x_abs + 0.5 * sx * (w_abs + 0.5 * sw * k) + 0.25 * sx * sw * k;
        b *= 1.0001;
      }
      bound[m * out + j] = b;
    }
  }
  return bound;
}

void CheckLinear(Precision p, int64_t n, int64_t k, int64_t out, bool accumulate) {
  testing::Prng prng(1000 + n * 31 + k);
  const Tensor x = Activations(n, k, 7 + n + k);
  const Tensor w = testing::RandomTensor({out, k}, 0.3f, prng);
  Tensor base = testing::RandomTensor({n, out}, 5.0f, prng);
  Tensor want = Tensor::Empty({n, out}, DType::kF32);
  std::copy(base.data<float>(), base.data<float>() + base.numel(), want.data<float>());
  ops::Linear(x, w, accumulate, &want);
  Tensor got = Tensor::Empty({n, out}, DType::kF32);
  std::copy(base.data<float>(), base.data<float>() + base.numel(), got.data<float>());
  const ops::LowPrecisionLinear low = ops::LowPrecisionLinear::Make(w, p);
  ops::LowPrecisionScratch scratch;
  low.Apply(x.data<float>(), n, accumulate, got.data<float>(), &scratch);
  const std::vector<double> bound = ErrorBounds(x, w, p);
  const float* b = base.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < n * out; ++i) {
    // The accumulated base adds one F32 rounding of the sum on each side.
    const double slack = accumulate ? 2 * std::ldexp(1.0, -24) * (std::fabs(b[i]) + std::fabs(want.data<float>()[i])) : 0;
    const double err = std::fabs(double{got.data<float>()[i]} - want.data<float>()[i]);
    if (!(err <= bound[i] + slack) && ++bad <= 5) {
      ADD_FAILURE() << PrecisionName(p) << " n=" << n << " k=" << k << " out=" << out
                    << " element " << i << ": |" << got.data<float>()[i] << " - "
                    << want.data<float>()[i] << "| = " << err << " > bound " << bound[i] + slack;
    }
  }
}

TEST(LowPrecisionLinearTest, Bf16WithinRoundingBound) {
  SKIP_UNLESS_HOST_RUNS(Precision::kBf16);
  for (bool acc : {false, true}) {
    CheckLinear(Precision::kBf16, 1, 64, 48, acc);
    CheckLinear(Precision::kBf16, 23, 37, 19, acc);
    CheckLinear(Precision::kBf16, 70, 256, 96, acc);
  }
}

TEST(LowPrecisionLinearTest, Int8WithinQuantisationBound) {
  SKIP_UNLESS_HOST_RUNS(Precision::kInt8);
  for (bool acc : {false, true}) {
    CheckLinear(Precision::kInt8, 1, 64, 48, acc);
    CheckLinear(Precision::kInt8, 23, 37, 19, acc);
    CheckLinear(Precision::kInt8, 70, 256, 96, acc);
    // 8200 outputs: the op works in row blocks of 32 here (4 blocks, the
    // last one partial).
    CheckLinear(Precision::kInt8, 100, 24, 8200, acc);
  }
}

TEST(LowPrecisionLinearTest, Int8ExactOnRepresentableValues) {
  SKIP_UNLESS_HOST_RUNS(Precision::kInt8);
  // Weights integers in [−127, 127] with 127 in every row (scale 1),
  // activations integers in [−100, 155] with both ends in every row (scale 1,
  // zero point 100): every quantisation is exact, so the result must equal
  // the F32 product of small integers (exact in F32) bit for bit, with and
  // without accumulation.
  const int64_t n = 9, k = 40, out = 13;
  Tensor x = Tensor::Empty({n, k}, DType::kF32), w = Tensor::Empty({out, k}, DType::kF32);
  for (int64_t m = 0; m < n; ++m) {
    for (int64_t i = 0; i < k; ++i) {
      const int64_t v = i == 0 ? 0 : i == 1 ? 255 : (m * 37 + i * 11) % 256;
      x.data<float>()[m * k + i] = static_cast<float>(v - 100);
    }
  }
  for (int64_t j = 0; j < out; ++j) {
    for (int64_t i = 0; i < k; ++i) {
      w.data<float>()[j * k + i] = i == 0 ? 127.0f : static_cast<float>((j * 13 + i * 7) % 255 - 127);
    }
  }
  const ops::LowPrecisionLinear low = ops::LowPrecisionLinear::Make(w, Precision::kInt8);
  ops::LowPrecisionScratch scratch;
  for (bool accumulate : {false, true}) {
    Tensor want = Tensor::Empty({n, out}, DType::kF32), got = Tensor::Empty({n, out}, DType::kF32);
    for (int64_t i = 0; i < n * out; ++i) {
      want.data<float>()[i] = got.data<float>()[i] = static_cast<float>(i % 17) - 8.0f;
    }
    ops::Linear(x, w, accumulate, &want);
    low.Apply(x.data<float>(), n, accumulate, got.data<float>(), &scratch);
    for (int64_t i = 0; i < n * out; ++i) {
      ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << "accumulate " << accumulate << " element " << i;
    }
  }
}

// The AVX-512 bodies of the per-call conversions against the portable ones
// (which run on AVX-VNNI-only hosts): the same values, ties and NaN included.
TEST(LowPrecisionConversionsTest, VectorBodiesMatchPortableOnes) {
  if (!HostCpuFeatures().avx512f) GTEST_SKIP() << "no AVX-512 body on this CPU";
  const int64_t n = 7, k = 83, cols = 45;  // tails after every 16/32-wide loop
  Tensor x = Activations(n, k, 3);
  float* xp = x.data<float>();
  xp[5] = std::nanf("");
  xp[6] = 1.00390625f;  // exactly halfway between two BF16 values (tie → even)
  xp[7] = -1.01171875f;
  std::vector<uint16_t> b0(n * k), b1(n * k);
  ops::internal::ToBf16(false, xp, n * k, b0.data());
  ops::internal::ToBf16(true, xp, n * k, b1.data());
  EXPECT_EQ(b0, b1);
  EXPECT_EQ(b0[6], 0x3f80);  // tie rounded to even
  xp[5] = 0.0f;
  std::vector<uint8_t> q0(n * k), q1(n * k);
  std::vector<float> s0(n), s1(n);
  std::vector<int32_t> z0(n), z1(n);
  ops::internal::QuantiseRowsU8(false, xp, n, k, q0.data(), s0.data(), z0.data());
  ops::internal::QuantiseRowsU8(true, xp, n, k, q1.data(), s1.data(), z1.data());
  EXPECT_EQ(q0, q1);
  EXPECT_EQ(s0, s1);
  EXPECT_EQ(z0, z1);
  testing::Prng prng(8);
  std::vector<int32_t> acc(n * cols), wsum(cols);
  std::vector<float> sw(cols);
  for (auto& a : acc) a = static_cast<int32_t>(prng.Next() % 2000001) - 1000000;
  for (auto& w : wsum) w = static_cast<int32_t>(prng.Next() % 20001) - 10000;
  for (auto& w : sw) w = 0.001f + std::fabs(prng.Uniform(0.01f));
  for (bool accumulate : {false, true}) {
    std::vector<float> o0(n * cols, 3.0f), o1(n * cols, 3.0f);
    ops::internal::Dequantise(false, acc.data(), n, cols, s0.data(), z0.data(), sw.data(),
                              wsum.data(), accumulate, o0.data());
    ops::internal::Dequantise(true, acc.data(), n, cols, s0.data(), z0.data(), sw.data(),
                              wsum.data(), accumulate, o1.data());
    for (int64_t i = 0; i < n * cols; ++i) {
      // The vector body may fuse the final multiply-add (one rounding less).
      EXPECT_NEAR(o0[i], o1[i], 2e-7 * (std::fabs(o0[i]) + 3.0f)) << i;
    }
  }
}

// The fused exp → BF16 pass of the BF16 attention against the F32 pass
// followed by rounding (both use the widest exp body of this host).
TEST(LowPrecisionConversionsTest, ExpShiftRowToBf16MatchesUnfused) {
  testing::Prng prng(12);
  for (int64_t n : {1, 15, 16, 17, 100, 2049}) {
    std::vector<float> x(n), y(n);
    for (auto& v : x) v = prng.Uniform(20.0f);
    y = x;
    std::vector<uint16_t> probs(n);
    const float sum = ops::cpu::ExpShiftRowToBf16(x.data(), n, probs.data());
    const float want_sum = ops::cpu::ExpShiftRowInplace(y.data(), n);
    EXPECT_EQ(sum, want_sum) << n;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(probs[i], F32ToBF16(y[i])) << n << " " << i;
  }
}

void CheckModel(std::shared_ptr<const NeoBertWeights> weights, const char* name) {
  const std::vector<int64_t> lengths = {1, 2, 3, 17, 64, 130, 257, 500};
  const PackedBatch batch = testing::MixedBatch(weights->config.vocab_size, lengths, 5);
  const int64_t dim = weights->config.hidden_size;
  const std::vector<Tensor> want = testing::PoolBoth(*MakeCpuBackend(weights, 1, Precision::kF32), batch, dim);
  for (auto [p, threshold] : {std::pair{Precision::kBf16, 0.999}, std::pair{Precision::kInt8, 0.99}}) {
    if (CpuPrecisionFor(p, nullptr) != p) continue;
    const std::string what = std::string(name) + " " + std::string(PrecisionName(p));
    const std::vector<Tensor> got = testing::PoolBoth(*MakeCpuBackend(weights, 1, p), batch, dim);
    testing::Report(what.c_str(), testing::Compare(want, got, batch, dim, threshold, what));
  }
}

TEST(PrecisionForwardTest, RandomInitCheckpoint) {
  SKIP_UNLESS_HOST_RUNS_EITHER();
  // The checkpoint `neodb model init --preset tiny` makes (uniform ±0.02).
  auto config = testing::SmallConfig(64, 2, 4, 211, 512);
  CheckModel(std::make_shared<const NeoBertWeights>(RandomWeights(config, 3, false)), "init");
}

TEST(PrecisionForwardTest, LargeWeightCheckpoint) {
  SKIP_UNLESS_HOST_RUNS_EITHER();
  // Weights far larger than at init: attention far from uniform, so rounding
  // errors in q·k reach the softmax (test_weights.h).
  auto config = testing::SmallConfig(64, 4, 4, 211, 512);
  CheckModel(std::make_shared<const NeoBertWeights>(testing::TestWeights(config, 128, 9)), "large");
}

}  // namespace
}  // namespace neodb::encoder
