// Each CUDA kernel against a plain CPU loop, with fresh random inputs per
// check and the output poisoned (NaN bytes) before every launch.
// Tolerances per dtype follow CTranslate2's: about 1e-5 F32, 1e-2 F16, 4e-2
// BF16 relative to the output's magnitude.
#include <cmath>
#include <random>
#include <vector>

#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/gemm.h"
#include "encoder/cuda/kernels.h"
#include "gtest/gtest.h"
#include "tests/encoder/cuda_reference.h"
#include "tests/encoder/cuda_test_util.h"

namespace neodb::encoder::testing {
namespace {

using cuda::DeviceBuffer;

constexpr DType kActTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

double Tolerance(DType t) {
  switch (t) {
    case DType::kF32:
      return 1e-5;
    case DType::kF16:
      return 4e-3;
    default:
      return 2e-2;
  }
}

std::mt19937_64 FreshRng() {
  const uint64_t seed = std::random_device{}();
  std::printf("[seed %llu]\n", static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

TEST(CudaKernelsTest, EmbeddingGather) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  const int vocab = 50, hidden = 768, tokens = 37;
  const auto table = RandomVector(int64_t{vocab} * hidden, -1, 1, rng);
  std::vector<int32_t> ids(tokens);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % vocab);
  DeviceBuffer d_table = Upload(table, DType::kF32), d_ids = UploadI32(ids);
  DeviceBuffer out = std::move(DeviceBuffer::Allocate(int64_t{tokens} * hidden * 4)).value();
  Poison(out);
  ASSERT_EQ(cuda::LaunchEmbeddingGather(d_table.as<float>(), d_ids.as<int32_t>(), tokens, hidden,
                                        out.as<float>(), ctx->stream()),
            cudaSuccess);
  const auto got = Download(out.get(), int64_t{tokens} * hidden, DType::kF32);
  for (int t = 0; t < tokens; ++t) {
    for (int c = 0; c < hidden; ++c) {
      ASSERT_EQ(got[t * hidden + c], table[int64_t{ids[t]} * hidden + c]) << t << "," << c;
    }
  }
}

TEST(CudaKernelsTest, RmsNormEveryOutputType) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  for (int cols : {768, 100}) {
    for (DType dt : kActTypes) {
      const int rows = 33;
      const float eps = 1e-5f;
      // Residual-like magnitudes (up to ~1000) to exercise the F32 reduction.
      const auto x = RandomVector(int64_t{rows} * cols, -1000, 1000, rng);
      const auto w = RandomVector(cols, 0.5f, 1.5f, rng);
      DeviceBuffer dx = Upload(x, DType::kF32), dw = Upload(w, DType::kF32);
      DeviceBuffer out = std::move(DeviceBuffer::Allocate(int64_t{rows} * cols * 4)).value();
      Poison(out);
      ASSERT_EQ(cuda::LaunchRmsNorm(dx.as<float>(), dw.as<float>(), rows, cols, eps, out.get(), dt,
                                    ctx->stream()),
                cudaSuccess);
      const auto got = Download(out.get(), int64_t{rows} * cols, dt);
      for (int r = 0; r < rows; ++r) {
        double ss = 0;
        for (int c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
        const double inv = 1.0 / std::sqrt(ss / cols + eps);
        for (int c = 0; c < cols; ++c) {
          const double want = x[r * cols + c] * inv * w[c];
          ASSERT_NEAR(got[r * cols + c], want, Tolerance(dt) * 4)
              << "dtype " << DTypeName(dt) << " cols " << cols << " at " << r << "," << c;
        }
      }
    }
  }
}

TEST(CudaKernelsTest, QkvRopeSplitsHeadsAndRotatesAdjacentPairs) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  const int heads = 12, d = 64, c = heads * d;
  const float theta = 10000.f;
  // Two packed sequences (positions restart) and a few large positions.
  std::vector<int32_t> pos;
  for (int p = 0; p < 5; ++p) pos.push_back(p);
  for (int p = 0; p < 70; ++p) pos.push_back(p);
  for (int p : {1023, 4095, 8191}) pos.push_back(p);
  const int tokens = static_cast<int>(pos.size());
  for (DType dt : kActTypes) {
    const auto qkv = RoundTo(RandomVector(int64_t{tokens} * 3 * c, -2, 2, rng), dt);
    DeviceBuffer d_qkv = Upload(qkv, dt), d_pos = UploadI32(pos);
    std::vector<DeviceBuffer> outs;
    for (int i = 0; i < 3; ++i) {
      outs.push_back(std::move(DeviceBuffer::Allocate(int64_t{tokens} * c * 4)).value());
      Poison(outs.back());
    }
    ASSERT_EQ(cuda::LaunchQkvRope(d_qkv.get(), d_pos.as<int32_t>(), tokens, heads, theta,
                                  outs[0].get(), outs[1].get(), outs[2].get(), dt, ctx->stream()),
              cudaSuccess);
    const auto q = Download(outs[0].get(), int64_t{tokens} * c, dt);
    const auto k = Download(outs[1].get(), int64_t{tokens} * c, dt);
    const auto v = Download(outs[2].get(), int64_t{tokens} * c, dt);
    const double tol = Tolerance(dt) * 3 + 2e-5;
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < heads; ++h) {
        const float* src = &qkv[(int64_t{t} * 3 * heads + 3 * h) * d];
        const int64_t o = (int64_t{t} * heads + h) * d;
        for (int i = 0; i < d / 2; ++i) {
          float cs, sn;
          RopeCosSin(pos[t], i, theta, &cs, &sn);
          // Both sides form the angle in F32 as pos · (1 / theta^(2i/d)), but the
          // device's powf and the host's std::pow may differ by a few ulp (CUDA's
          // powf is not correctly rounded), and the product rounds once more: allow
          // 6 · 2^-24 of the angle (3 to 6 ulp), e.g. 3e-3 rad at 8191 rad (the first GPU run saw
          // 5.7e-5 in a rotated value where a flat 5e-5 was allowed). A
          // pair rotated by an angle off by e moves by at most e · |pair|.
          const double angle =
              pos[t] * std::pow(static_cast<double>(theta), -2.0 * i / static_cast<double>(d));
          const double angle_err = 6 * std::ldexp(angle, -24);
          const double tq = tol + angle_err * (std::abs(src[2 * i]) + std::abs(src[2 * i + 1]));
          const double tk =
              tol + angle_err * (std::abs(src[d + 2 * i]) + std::abs(src[d + 2 * i + 1]));
          ASSERT_NEAR(q[o + 2 * i], src[2 * i] * cs - src[2 * i + 1] * sn, tq)
              << DTypeName(dt) << " t=" << t << " h=" << h << " i=" << i;
          ASSERT_NEAR(q[o + 2 * i + 1], src[2 * i] * sn + src[2 * i + 1] * cs, tq);
          ASSERT_NEAR(k[o + 2 * i], src[d + 2 * i] * cs - src[d + 2 * i + 1] * sn, tk);
          ASSERT_NEAR(k[o + 2 * i + 1], src[d + 2 * i] * sn + src[d + 2 * i + 1] * cs, tk);
          ASSERT_EQ(v[o + 2 * i], src[2 * d + 2 * i]);
          ASSERT_EQ(v[o + 2 * i + 1], src[2 * d + 2 * i + 1]);
        }
      }
    }
  }
}

TEST(CudaKernelsTest, SwiGluGatesTheFirstHalf) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  for (int f : {2048, 100}) {
    for (DType dt : kActTypes) {
      const int rows = 17;
      const auto u = RoundTo(RandomVector(int64_t{rows} * 2 * f, -6, 6, rng), dt);
      DeviceBuffer du = Upload(u, dt);
      DeviceBuffer out = std::move(DeviceBuffer::Allocate(int64_t{rows} * f * 4)).value();
      Poison(out);
      ASSERT_EQ(cuda::LaunchSwiGlu(du.get(), rows, f, out.get(), dt, ctx->stream()), cudaSuccess);
      const auto got = Download(out.get(), int64_t{rows} * f, dt);
      for (int r = 0; r < rows; ++r) {
        for (int j = 0; j < f; ++j) {
          const double g = u[int64_t{r} * 2 * f + j], l = u[int64_t{r} * 2 * f + f + j];
          const double want = g / (1 + std::exp(-g)) * l;
          ASSERT_NEAR(got[int64_t{r} * f + j], want, Tolerance(dt) * std::max(1.0, std::fabs(want)))
              << DTypeName(dt) << " f=" << f << " at " << r << "," << j;
        }
      }
    }
  }
}

TEST(CudaKernelsTest, PoolClsAndMeanOverPackedSequences) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  const int cols = 768;
  const std::vector<int32_t> cu = {0, 1, 6, 76, 333};
  const int batch = static_cast<int>(cu.size()) - 1;
  PackedBatch pb;
  pb.offsets.assign(cu.begin(), cu.end());
  const auto hidden = RandomVector(int64_t{cu.back()} * cols, -50, 50, rng);
  DeviceBuffer dh = Upload(hidden, DType::kF32), dcu = UploadI32(cu);
  for (Pooling pooling : {Pooling::kCls, Pooling::kMean}) {
    DeviceBuffer out = std::move(DeviceBuffer::Allocate(int64_t{batch} * cols * 4)).value();
    Poison(out);
    ASSERT_EQ(cuda::LaunchPool(dh.as<float>(), dcu.as<int32_t>(), batch, cols,
                               pooling == Pooling::kMean, out.as<float>(), ctx->stream()),
              cudaSuccess);
    const auto got = Download(out.get(), int64_t{batch} * cols, DType::kF32);
    const auto want = ReferencePool(hidden, cols, pb, pooling);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

// Y = X·Wᵀ (+ Y) through cuBLASLt: checks the row-major/column-major mapping
// and the fused residual add into an F32 output.
TEST(CudaKernelsTest, GemmLinearLayerAndResidualAdd) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  cuda::Gemm gemm(ctx.get());
  const int m = 37, n = 96, k = 128;
  for (DType dt : kActTypes) {
    for (bool accumulate : {false, true}) {
      const DType out_type = accumulate ? DType::kF32 : dt;
      const auto x = RoundTo(RandomVector(int64_t{m} * k, -1, 1, rng), dt);
      const auto w = RoundTo(RandomVector(int64_t{n} * k, -1, 1, rng), dt);
      const auto y0 = RandomVector(int64_t{m} * n, -10, 10, rng);
      DeviceBuffer dx = Upload(x, dt), dw = Upload(w, dt);
      DeviceBuffer dy = accumulate ? Upload(y0, DType::kF32)
                                   : std::move(DeviceBuffer::Allocate(int64_t{m} * n * 4)).value();
      if (!accumulate) Poison(dy);
      ASSERT_TRUE(
          gemm.Run(dx.get(), dw.get(), dy.get(), m, n, k, dt, out_type, accumulate ? 1.f : 0.f)
              .ok());
      const auto got = Download(dy.get(), int64_t{m} * n, out_type);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double want = accumulate ? y0[i * n + j] : 0.0;
          for (int kk = 0; kk < k; ++kk) want += double(x[i * k + kk]) * w[j * k + kk];
          // F32 "compute 32F" may still use TF32-free FMA order: 1e-4 abs.
          const double tol =
              out_type == DType::kF32 ? 2e-3 : Tolerance(dt) * std::fabs(want) + 1e-2;
          ASSERT_NEAR(got[i * n + j], want, tol)
              << DTypeName(dt) << " accumulate=" << accumulate << " at " << i << "," << j;
        }
      }
    }
  }
}

// Attention against naive softmax attention at several lengths, including
// 1 and non-multiples of the 64-wide tiles, packed in one batch.
TEST(CudaKernelsTest, AttentionMatchesNaiveSoftmaxAttention) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  auto rng = FreshRng();
  const int heads = 2, d = 64;
  const std::vector<int> lengths = {1, 5, 63, 64, 65, 127, 128, 129, 130, 257, 1000, 1500};
  std::vector<int32_t> cu = {0};
  int max_len = 0;
  for (int len : lengths) {
    cu.push_back(cu.back() + len);
    max_len = std::max(max_len, len);
  }
  const int64_t n = int64_t{cu.back()} * heads * d;
  const float scale = 0.125f;
  DeviceBuffer dcu = UploadI32(cu);
  // F32 runs the scalar kernel; F16/BF16 every variant.
  struct Case {
    DType dt;
    cuda::AttentionKernel kernel;
    const char* name;
  };
  using K = cuda::AttentionKernel;
  const Case cases[] = {
      {DType::kF32, K::kScalar, "scalar"},      {DType::kF16, K::kPipelined, "pipelined"},
      {DType::kF16, K::kTiled128, "tiled128"},  {DType::kF16, K::kTiled64, "tiled64"},
      {DType::kF16, K::kScalar, "scalar"},      {DType::kBF16, K::kPipelined, "pipelined"},
      {DType::kBF16, K::kTiled128, "tiled128"}, {DType::kBF16, K::kTiled64, "tiled64"},
      {DType::kBF16, K::kScalar, "scalar"},
  };
  for (const Case& cs : cases) {
    const DType dt = cs.dt;
    // q larger than k and v so that the softmax is far from uniform.
    const auto q = RoundTo(RandomVector(n, -3, 3, rng), dt);
    const auto k = RoundTo(RandomVector(n, -1, 1, rng), dt);
    const auto v = RoundTo(RandomVector(n, -1, 1, rng), dt);
    DeviceBuffer dq = Upload(q, dt), dk = Upload(k, dt), dv = Upload(v, dt);
    DeviceBuffer out = std::move(DeviceBuffer::Allocate(n * 4)).value();
    Poison(out);
    ASSERT_EQ(cuda::LaunchAttention(dq.get(), dk.get(), dv.get(), dcu.as<int32_t>(),
                                    static_cast<int>(lengths.size()), max_len, heads, d, scale,
                                    out.get(), dt, ctx->stream(), cs.kernel),
              cudaSuccess);
    const auto got = Download(out.get(), n, dt);
    const auto want = ReferenceAttention(q, k, v, cu, heads, scale);
    const double tol = dt == DType::kF32 ? 2e-5 : dt == DType::kF16 ? 4e-3 : 2.5e-2;
    for (size_t b = 0; b < lengths.size(); ++b) {
      const int64_t begin = int64_t{cu[b]} * heads * d, end = int64_t{cu[b + 1]} * heads * d;
      const Diff diff = Compare(&got[begin], &want[begin], end - begin);
      EXPECT_FALSE(diff.any_nan) << DTypeName(dt) << "/" << cs.name << " length " << lengths[b];
      EXPECT_LE(diff.max_abs, tol) << DTypeName(dt) << "/" << cs.name << " length " << lengths[b];
      std::printf("attention %s %s len %5d: max abs err %.3g, cosine %.8f\n",
                  std::string(DTypeName(dt)).c_str(), cs.name, lengths[b], diff.max_abs,
                  diff.cosine);
    }
  }
  // A head_dim other than 64 is refused, not computed wrongly.
  EXPECT_EQ(cuda::LaunchAttention(nullptr, nullptr, nullptr, dcu.as<int32_t>(), 1, 1, heads, 32,
                                  scale, nullptr, DType::kBF16, ctx->stream()),
            cudaErrorInvalidValue);
  EXPECT_EQ(cuda::LaunchAttention(nullptr, nullptr, nullptr, dcu.as<int32_t>(), 1, 1, heads, d,
                                  scale, nullptr, DType::kI32, ctx->stream()),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace neodb::encoder::testing
