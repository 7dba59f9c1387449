// The CPU ops split over threads (ops/parallel_cpu.h) give what they give on
// one thread: bit for bit for the row-wise ops, and for attention to within
// the rounding of its matmuls (oneDNN may pick another kernel inside a
// parallel region). ParallelFor itself covers every item once.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "encoder/ops/attention.h"
#include "encoder/ops/gelu.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/layer_norm.h"
#include "encoder/ops/parallel_cpu.h"
#include "encoder/ops/qkv_rope.h"
#include "encoder/ops/rms_norm.h"
#include "encoder/ops/split_qkv.h"
#include "encoder/ops/swiglu.h"
#include "gtest/gtest.h"
#include "tests/encoder/test_weights.h"

namespace neodb::encoder::ops {
namespace {

using testing::Prng;
using testing::RandomTensor;

constexpr int kThreads = 4;  // more than the test machine's cores is fine

// Runs `op` with one GEMM thread and with kThreads; returns both outputs.
template <typename Op>
std::pair<Tensor, Tensor> OneAndMany(const Op& op) {
  cpu::SetGemmThreads(1);
  Tensor one = op();
  cpu::SetGemmThreads(kThreads);
  Tensor many = op();
  cpu::SetGemmThreads(1);
  return {std::move(one), std::move(many)};
}

void ExpectBitEqual(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.numel(), b.numel()) << what;
  EXPECT_EQ(std::memcmp(a.data<float>(), b.data<float>(), a.numel() * sizeof(float)), 0) << what;
}

Tensor Copy(const Tensor& t) {
  Tensor c = Tensor::Empty(t.shape(), DType::kF32);
  std::memcpy(c.data<float>(), t.data<float>(), t.numel() * sizeof(float));
  return c;
}

TEST(ParallelForTest, CoversEveryItemOnceWithinTheWorkerCount) {
  cpu::SetGemmThreads(kThreads);
  for (int64_t n : {0, 1, 5, 64, 1001}) {
    for (int64_t grain : {1, 7, 2000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::atomic<int> bad_worker{0};
      cpu::ParallelFor(n, grain, 3, [&](int64_t begin, int64_t end, int worker) {
        if (worker < 0 || worker >= 3 || end - begin > grain) ++bad_worker;
        for (int64_t i = begin; i < end; ++i) ++seen[static_cast<size_t>(i)];
      });
      EXPECT_EQ(bad_worker.load(), 0) << n << " " << grain;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1) << i;
    }
  }
  cpu::SetGemmThreads(1);
}

TEST(ParallelForTest, OneWorkerOrANestedCallRunsOnTheCaller) {
  cpu::SetGemmThreads(kThreads);
  std::vector<int> calls;
  cpu::ParallelFor(100, 1, 1, [&](int64_t begin, int64_t end, int worker) {
    calls.push_back(static_cast<int>(end - begin));
    EXPECT_EQ(worker, 0);
  });
  EXPECT_EQ(calls, std::vector<int>{100});
  // Inside a parallel region: each outer chunk runs its inner loop whole.
  std::mutex mu;
  std::vector<int64_t> inner;
  cpu::ParallelFor(4, 1, kThreads, [&](int64_t, int64_t, int) {
    cpu::ParallelFor(50, 1, kThreads, [&](int64_t begin, int64_t end, int worker) {
      std::lock_guard<std::mutex> lock(mu);
      inner.push_back(end - begin);
      EXPECT_EQ(worker, 0);
    });
  });
  EXPECT_EQ(inner, std::vector<int64_t>(4, 50));
  cpu::SetGemmThreads(1);
}

TEST(ParallelOpsTest, RowOpsAreBitEqualOnOneThreadAndMany) {
  Prng prng(11);
  const int64_t rows = 333, cols = 384, ffn = 1536;  // many row chunks, a short last one
  const Tensor x = RandomTensor({rows, cols}, 2, prng, 0.5f);
  const Tensor bias = RandomTensor({cols}, 0.5f, prng);
  const Tensor gamma = RandomTensor({cols}, 0.2f, prng, 1.0f);
  const Tensor beta = RandomTensor({cols}, 0.2f, prng);
  auto [ln1, lnn] = OneAndMany([&] {
    Tensor out = Copy(x);  // in place, as BERT's post-norm runs it
    LayerNorm(out, &bias, gamma, beta, 1e-12f, &out);
    return out;
  });
  ExpectBitEqual(ln1, lnn, "LayerNorm");
  auto [rms1, rmsn] = OneAndMany([&] {
    Tensor out = Tensor::Empty({rows, cols}, DType::kF32);
    RmsNorm(x, gamma, 1e-6f, &out);
    return out;
  });
  ExpectBitEqual(rms1, rmsn, "RmsNorm");
  const Tensor u = RandomTensor({rows, ffn}, 3, prng);
  const Tensor ffn_bias = RandomTensor({ffn}, 0.5f, prng);
  auto [gelu1, gelun] = OneAndMany([&] {
    Tensor out = Copy(u);
    BiasGelu(ffn_bias, &out);
    return out;
  });
  ExpectBitEqual(gelu1, gelun, "BiasGelu");
  auto [glu1, glun] = OneAndMany([&] {
    Tensor out = Tensor::Empty({rows, ffn / 2}, DType::kF32);
    SwiGlu(u, &out);
    return out;
  });
  ExpectBitEqual(glu1, glun, "SwiGlu");
}

TEST(ParallelOpsTest, QkvSplitsAreBitEqualOnOneThreadAndMany) {
  Prng prng(12);
  const int64_t heads = 6, d = 32, c = heads * d;
  const std::vector<int64_t> offsets = {0, 17, 17, 80, 81, 300};  // an empty sequence too
  const int64_t n = offsets.back();
  const Tensor qkv = RandomTensor({n, 3 * c}, 1, prng);
  const Tensor bias = RandomTensor({3 * c}, 0.5f, prng);
  auto split = [&](bool rope) {
    Tensor q = Tensor::Empty({heads, n, d}, DType::kF32);
    Tensor k = Tensor::Empty({heads, n, d}, DType::kF32);
    Tensor v = Tensor::Empty({heads, n, d}, DType::kF32);
    if (rope) {
      SplitQkvRope(qkv, offsets, heads, MakeRopeTable(512, d, 10000.0), &q, &k, &v);
    } else {
      SplitQkv(qkv, bias, heads, &q, &k, &v);
    }
    Tensor all = Tensor::Empty({3 * heads * n * d}, DType::kF32);
    float* p = all.data<float>();
    for (const Tensor* t : {&q, &k, &v}) {
      std::memcpy(p, t->data<float>(), t->numel() * sizeof(float));
      p += t->numel();
    }
    return all;
  };
  auto [plain1, plainn] = OneAndMany([&] { return split(false); });
  ExpectBitEqual(plain1, plainn, "SplitQkv");
  auto [rope1, ropen] = OneAndMany([&] { return split(true); });
  ExpectBitEqual(rope1, ropen, "SplitQkvRope");
}

TEST(ParallelOpsTest, AttentionOnManyThreadsMatchesOneThread) {
  Prng prng(13);
  const int64_t heads = 4, d = 16, long_len = 700;  // several score blocks
  const std::vector<int64_t> offsets = {0, 5, 5, 5 + long_len, 5 + long_len + 64};
  const int64_t n = offsets.back();
  const Tensor q = RandomTensor({heads, n, d}, 2, prng);
  const Tensor k = RandomTensor({heads, n, d}, 2, prng);
  const Tensor v = RandomTensor({heads, n, d}, 1, prng);
  auto run = [&](int slices) {
    Tensor out = Tensor::Empty({n, heads * d}, DType::kF32);
    Tensor scratch = Tensor::Empty({AttentionScratchSize(long_len) * slices}, DType::kF32);
    Attention(q, k, v, offsets, 0.25f, &scratch, &out);
    return out;
  };
  cpu::SetGemmThreads(1);
  const Tensor one = run(1);
  cpu::SetGemmThreads(kThreads);
  const Tensor many = run(kThreads);  // a slice per thread: the heads in parallel
  cpu::SetGemmThreads(1);
  float max_diff = 0;
  for (int64_t i = 0; i < one.numel(); ++i) {
    max_diff = std::max(max_diff, std::abs(one.data<float>()[i] - many.data<float>()[i]));
  }
  // Outputs are convex mixtures of v (|v| ≤ 1): F32 rounding is ~1e-7.
  EXPECT_LE(max_diff, 1e-6f);
}

}  // namespace
}  // namespace neodb::encoder::ops
