// Each CUDA training kernel (encoder/train/cuda/train_kernels.h) and the
// training GEMM against the CPU training body of the same name (the one
// TapeOps<float> runs), on random data, with fixed seeds. Skipped only where
// there is no CUDA device.
//
// Bound: the F32 relative error of the whole output, ‖gpu − cpu‖ / ‖cpu‖ ≤
// 1e-5 (CTranslate2's F32 tolerance; the CPU bodies sum some rows in F64,
// the kernels in F32, in another order). Attention's gradient gets 1e-4:
// dq_i = Σ_j dS_ij k_j sums terms whose dS_ij add up to exactly 0 over j, so
// the result is smaller than its terms and their rounding (≈ √130 · 2^-24 of
// the terms) is amplified by that cancellation; a wrong term is O(1).
#include <cmath>
#include <cstring>
#include <vector>

#include "encoder/cuda/cuda_check.h"
#include "encoder/train/adamw.h"
#include "encoder/train/attention.h"
#include "encoder/train/blas.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/embedding_rows.h"
#include "encoder/train/gelu.h"
#include "encoder/train/layer_norm.h"
#include "encoder/train/linear.h"
#include "encoder/train/rms_norm.h"
#include "encoder/train/rope.h"
#include "encoder/train/swiglu.h"
#include "encoder/train/cuda/train_gemm.h"
#include "encoder/train/cuda/train_kernels.h"
#include "gtest/gtest.h"
#include "tests/encoder/cuda_test_util.h"

namespace neodb::encoder::train {
namespace {

using encoder::cuda::DeviceBuffer;
using encoder::testing::Download;
using encoder::testing::Upload;
using encoder::testing::UploadI32;

constexpr double kTol = 1e-5;
constexpr double kAttentionGradTol = 1e-4;

std::vector<float> Rand(int64_t n, uint64_t seed, float scale = 1.f) {
  SplitMix64 rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * static_cast<float>(2 * rng.Uniform() - 1);
  return v;
}

DeviceBuffer Up(const std::vector<float>& v) { return Upload(v, DType::kF32); }
std::vector<float> Down(const DeviceBuffer& b, size_t n) {
  return Download(b.get(), static_cast<int64_t>(n), DType::kF32);
}
DeviceBuffer UpI64(const std::vector<int64_t>& v) {
  DeviceBuffer b = *DeviceBuffer::Allocate(v.size() * sizeof(int64_t));
  EXPECT_EQ(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
            cudaSuccess);
  return b;
}

double RelErr(const std::vector<float>& got, const std::vector<float>& want) {
  double d = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    d += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    n += double(want[i]) * want[i];
  }
  return std::sqrt(d) / std::max(std::sqrt(n), 1e-30);
}

#define EXPECT_CLOSE_TOL(what, got, want, tol)                     \
  do {                                                             \
    ASSERT_EQ((got).size(), (want).size()) << what;                \
    EXPECT_LE(RelErr((got), (want)), (tol)) << what;               \
    for (float g_ : (got)) ASSERT_TRUE(std::isfinite(g_)) << what; \
  } while (0)
#define EXPECT_CLOSE(what, got, want) EXPECT_CLOSE_TOL(what, got, want, kTol)

void Sync() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess); }

TEST(CudaTrainKernels, RmsNorm) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t rows = 37, cols = 300;
  const auto x = Rand(rows * cols, 1, 2.f), w = Rand(cols, 2), dy = Rand(rows * cols, 3);
  std::vector<float> y(x.size()), rstd(rows), dx = Rand(x.size(), 4), dw = Rand(cols, 5);
  DeviceBuffer gx = Up(x), gw = Up(w), gdy = Up(dy), gy = Up(y), grstd = Up(rstd), gdx = Up(dx),
               gdw = Up(dw);
  RmsNormForward(x.data(), w.data(), rows, cols, 1e-5, y.data(), rstd.data());
  RmsNormBackward(x.data(), w.data(), rstd.data(), dy.data(), rows, cols, dx.data(), dw.data());
  ASSERT_EQ(cuda::LaunchRmsNormForward(gx.as<float>(), gw.as<float>(), rows, cols, 1e-5f,
                                       gy.as<float>(), grstd.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchRmsNormBackward(gx.as<float>(), gw.as<float>(), grstd.as<float>(),
                                        gdy.as<float>(), rows, cols, gdx.as<float>(),
                                        gdw.as<float>(), nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("y", Down(gy, y.size()), y);
  EXPECT_CLOSE("rstd", Down(grstd, rows), rstd);
  EXPECT_CLOSE("dx (added)", Down(gdx, dx.size()), dx);
  EXPECT_CLOSE("dw (added)", Down(gdw, dw.size()), dw);
}

TEST(CudaTrainKernels, LayerNorm) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t rows = 29, cols = 384;
  const auto x = Rand(rows * cols, 6, 3.f), w = Rand(cols, 7), b = Rand(cols, 8),
             dy = Rand(rows * cols, 9);
  std::vector<float> y(x.size()), mean(rows), rstd(rows), dx = Rand(x.size(), 10),
      dw = Rand(cols, 11), db = Rand(cols, 12);
  DeviceBuffer gx = Up(x), gw = Up(w), gb = Up(b), gdy = Up(dy), gy = Up(y), gm = Up(mean),
               gr = Up(rstd), gdx = Up(dx), gdw = Up(dw), gdb = Up(db);
  LayerNormForward(x.data(), w.data(), b.data(), rows, cols, 1e-5, y.data(), mean.data(),
                   rstd.data());
  LayerNormBackward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), rows, cols, dx.data(),
                    dw.data(), db.data());
  ASSERT_EQ(cuda::LaunchLayerNormForward(gx.as<float>(), gw.as<float>(), gb.as<float>(), rows, cols,
                                         1e-5f, gy.as<float>(), gm.as<float>(), gr.as<float>(),
                                         nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchLayerNormBackward(gx.as<float>(), gw.as<float>(), gm.as<float>(),
                                          gr.as<float>(), gdy.as<float>(), rows, cols,
                                          gdx.as<float>(), gdw.as<float>(), gdb.as<float>(),
                                          nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("y", Down(gy, y.size()), y);
  EXPECT_CLOSE("dx", Down(gdx, dx.size()), dx);
  EXPECT_CLOSE("dw", Down(gdw, dw.size()), dw);
  EXPECT_CLOSE("db", Down(gdb, db.size()), db);
}

// Lengths 1 (a lone token), 5, 64 and 65 (the key kernel's chunk edge) and
// 130, packed end to end, 3 heads of 64.
TEST(CudaTrainKernels, Attention) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const std::vector<int64_t> offsets = {0, 1, 6, 70, 135, 265};
  const int64_t batch = 5, rows = offsets.back(), h = 3, d = 64, max_len = 130;
  const auto qkv = Rand(rows * 3 * h * d, 13, 1.5f), d_o = Rand(rows * h * d, 14);
  std::vector<float> o(rows * h * d), lse(rows * h), dqkv(qkv.size());
  AttentionForward(qkv.data(), offsets.data(), batch, h, d, o.data(), lse.data());
  AttentionBackward(qkv.data(), o.data(), lse.data(), d_o.data(), offsets.data(), batch, h, d,
                    dqkv.data());
  DeviceBuffer gq = Up(qkv), gdo = Up(d_o), goff = UpI64(offsets), go = Up(o), gl = Up(lse),
               gdelta = Up(lse), gd = Up(std::vector<float>(dqkv.size(), NAN));
  ASSERT_EQ(cuda::LaunchAttentionForward(gq.as<float>(), goff.as<int64_t>(), batch, rows, max_len,
                                         h, d, go.as<float>(), gl.as<float>(), nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("o", Down(go, o.size()), o);
  EXPECT_CLOSE("lse", Down(gl, lse.size()), lse);
  ASSERT_EQ(cuda::LaunchAttentionBackward(gq.as<float>(), go.as<float>(), gl.as<float>(),
                                          gdo.as<float>(), goff.as<int64_t>(), batch, rows,
                                          max_len, h, d, gdelta.as<float>(), gd.as<float>(),
                                          nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE_TOL("dqkv (every element written)", Down(gd, dqkv.size()), dqkv,
                   kAttentionGradTol);
  EXPECT_EQ(cuda::LaunchAttentionForward(gq.as<float>(), goff.as<int64_t>(), batch, rows, max_len,
                                         h, 32, go.as<float>(), gl.as<float>(), nullptr),
            cudaErrorInvalidValue);
}

TEST(CudaTrainKernels, RopeForwardAndInverse) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t rows = 9, h = 2, d = 64, ld = 3 * h * d;
  const RopeTable<float> table(16, d, 10000.0);
  const std::vector<int32_t> pos = {0, 1, 2, 3, 0, 1, 15, 7, 8};
  std::vector<float> x = Rand(rows * ld, 15), want = x;
  RopeApply(want.data(), rows, ld, pos.data(), h, 0, 3 * d, table, false);
  RopeApply(want.data(), rows, ld, pos.data(), h, d, 3 * d, table, true);
  DeviceBuffer gx = Up(x), gc = Up(table.cos), gs = Up(table.sin), gp = UploadI32(pos);
  ASSERT_EQ(cuda::LaunchRope(gx.as<float>(), rows, ld, gp.as<int32_t>(), h, 0, 3 * d,
                             gc.as<float>(), gs.as<float>(), table.half, false, nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchRope(gx.as<float>(), rows, ld, gp.as<int32_t>(), h, d, 3 * d,
                             gc.as<float>(), gs.as<float>(), table.half, true, nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("rotated", Down(gx, x.size()), want);
}

TEST(CudaTrainKernels, SwiGluAndGelu) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t rows = 17, f = 200;
  const auto u = Rand(rows * 2 * f, 16, 3.f), ds = Rand(rows * f, 17);
  std::vector<float> s(rows * f), du(u.size());
  SwiGluForward(u.data(), rows, f, s.data());
  SwiGluBackward(u.data(), ds.data(), rows, f, du.data());
  DeviceBuffer gu = Up(u), gds = Up(ds), gs = Up(s), gdu = Up(du);
  ASSERT_EQ(cuda::LaunchSwiGluForward(gu.as<float>(), rows, f, gs.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchSwiGluBackward(gu.as<float>(), gds.as<float>(), rows, f, gdu.as<float>(),
                                       nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("swiglu", Down(gs, s.size()), s);
  EXPECT_CLOSE("swiglu du", Down(gdu, du.size()), du);
  const int64_t n = rows * f;
  std::vector<float> g(n), dg(n);
  GeluForward(u.data(), n, g.data());
  GeluBackward(u.data(), ds.data(), n, dg.data());
  ASSERT_EQ(cuda::LaunchGeluForward(gu.as<float>(), n, gs.as<float>(), nullptr), cudaSuccess);
  ASSERT_EQ(cuda::LaunchGeluBackward(gu.as<float>(), gds.as<float>(), n, gdu.as<float>(), nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("gelu", Down(gs, n), g);
  EXPECT_CLOSE("gelu du", Down(gdu, n), dg);
}

TEST(CudaTrainKernels, BiasInterleaveAndResidual) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t rows = 11, h = 2, d = 64, c = h * d;
  const auto blocks = Rand(rows * 3 * c, 18), b = Rand(c, 19);
  // Interleave, then the gradient direction adds back: blocks + blocks.
  DeviceBuffer gb = Up(blocks), gi = Up(blocks), gbias = Up(b);
  ASSERT_EQ(cuda::LaunchInterleaveQkv(gb.as<float>(), rows, h, d, gi.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchAddDeinterleavedQkv(gi.as<float>(), rows, h, d, gb.as<float>(), nullptr),
            cudaSuccess);
  std::vector<float> twice = blocks;
  for (float& v : twice) v *= 2;
  // Bias on the middle column block (k) of the [rows, 3C] matrix, and its sum.
  ASSERT_EQ(cuda::LaunchAddBias(gbias.as<float>(), rows, c, 3 * c, c, gb.as<float>(), nullptr),
            cudaSuccess);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < c; ++i) twice[r * 3 * c + c + i] += b[i];
  }
  std::vector<float> db = Rand(c, 20), db_want = db;
  DeviceBuffer gdb = Up(db);
  ASSERT_EQ(cuda::LaunchBiasBackward(gb.as<float>(), rows, c, 3 * c, c, gdb.as<float>(), nullptr),
            cudaSuccess);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < c; ++i) db_want[i] += twice[r * 3 * c + c + i];
  }
  Sync();
  EXPECT_CLOSE("deinterleaved + bias", Down(gb, twice.size()), twice);
  EXPECT_CLOSE("bias gradient", Down(gdb, c), db_want);
}

TEST(CudaTrainKernels, Embeddings) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  const int64_t vocab = 50, dim = 96;
  const std::vector<int32_t> ids = {3, 7, 3, 49, 0, 7, 7, 3, 12};
  const std::vector<int64_t> offsets = {0, 4, 5, 9};
  std::vector<int32_t> pos;
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) pos.push_back(int32_t(i - offsets[b]));
  }
  const int64_t rows = 9, max_len = 4;
  const auto table = Rand(vocab * dim, 21), ptable = Rand(8 * dim, 22), dx = Rand(rows * dim, 23);
  std::vector<float> x(rows * dim), dt = Rand(vocab * dim, 24), dp = Rand(8 * dim, 25);
  EmbeddingForward(ids.data(), rows, table.data(), dim, x.data());
  PositionEmbeddingForward(ptable.data(), offsets.data(), 3, dim, x.data());
  DeviceBuffer gt = Up(table), gpt = Up(ptable), gdx = Up(dx), gx = Up(x), gdt = Up(dt),
               gdp = Up(dp), gids = UploadI32(ids), gpos = UploadI32(pos), goff = UpI64(offsets);
  EmbeddingBackward(ids.data(), rows, dx.data(), dim, dt.data());
  PositionEmbeddingBackward(dx.data(), offsets.data(), 3, dim, dp.data());
  const EmbeddingRows by_id = EmbeddingRowsById(ids.data(), rows);
  DeviceBuffer gu = UploadI32(by_id.unique_ids), gbegin = UploadI32(by_id.row_begin),
               grows = UploadI32(by_id.token_rows);
  ASSERT_EQ(cuda::LaunchEmbeddingForward(gids.as<int32_t>(), rows, gt.as<float>(), dim,
                                         gx.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchPositionEmbeddingForward(gpt.as<float>(), gpos.as<int32_t>(), rows, dim,
                                                 gx.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchEmbeddingBackward(gu.as<int32_t>(), gbegin.as<int32_t>(),
                                          grows.as<int32_t>(),
                                          static_cast<int64_t>(by_id.unique_ids.size()),
                                          gdx.as<float>(), dim, gdt.as<float>(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cuda::LaunchPositionEmbeddingBackward(gdx.as<float>(), goff.as<int64_t>(), 3, max_len,
                                                  dim, gdp.as<float>(), nullptr),
            cudaSuccess);
  Sync();
  EXPECT_CLOSE("x", Down(gx, x.size()), x);
  EXPECT_CLOSE("d table (rows not in the batch untouched)", Down(gdt, dt.size()), dt);
  EXPECT_CLOSE("d positions", Down(gdp, dp.size()), dp);
}

TEST(CudaTrainKernels, AdamWStepMatchesTheCpu) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  NeoBertConfig c;
  c.hidden_size = 16;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;
  c.vocab_size = 10;
  c.max_length = 8;
  const ParamLayout layout(c);
  const int64_t n = layout.total();
  AdamW cpu(layout, 0, AdamWOptions{});
  std::vector<float> p = Rand(n, 26), p_gpu = p, m(n, 0.f), v(n, 0.f);
  std::vector<uint8_t> decay(n, 0);
  for (const ParamEntry& e : layout.entries()) {
    if (e.is_matrix) std::fill(decay.begin() + e.offset, decay.begin() + e.offset + e.numel, 1);
  }
  DeviceBuffer gp = Up(p), gm = Up(m), gv = Up(v);
  DeviceBuffer gdecay = *DeviceBuffer::Allocate(n);
  ASSERT_EQ(cudaMemcpy(gdecay.get(), decay.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  for (int step = 1; step <= 3; ++step) {
    const auto g = Rand(n, 27 + step);
    const double lr = 1e-3 * step;
    cpu.Step(p.data(), g.data(), lr);
    cuda::AdamWStepArgs a;
    a.step_size = static_cast<float>(lr / (1 - std::pow(0.9, step)));
    a.inv_sqrt_bc2 = static_cast<float>(1 / std::sqrt(1 - std::pow(0.95, step)));
    a.decay = static_cast<float>(1 - lr * 0.01);
    DeviceBuffer gg = Up(g);
    ASSERT_EQ(cuda::LaunchAdamWStep(gp.as<float>(), gg.as<float>(), gm.as<float>(), gv.as<float>(),
                                    gdecay.as<uint8_t>(), nullptr, n, a, nullptr),
              cudaSuccess);
    Sync();
  }
  EXPECT_CLOSE("params after 3 steps", Down(gp, n), p);
  EXPECT_CLOSE("m", Down(gm, n), cpu.m());
  EXPECT_CLOSE("v", Down(gv, n), cpu.v());
}

// The three products of a Linear layer, with row strides wider than the
// matrices (as the stacked q | k | v parts are read), against OpenBLAS.
TEST(CudaTrainKernels, TrainGemm) {
  NEODB_CUDA_CONTEXT_OR_SKIP(ctx);
  cuda::TrainGemm gemm(ctx.get());
  const int64_t m = 37, n = 45, k = 29;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const float beta : {0.f, 1.f}) {
        const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 5, ldc = n + 2;
        const auto a = Rand((ta ? k : m) * lda, 40), b = Rand((tb ? n : k) * ldb, 41);
        std::vector<float> c = Rand(m * ldc, 42);
        DeviceBuffer ga = Up(a), gb = Up(b), gc = Up(c);
        Gemm<float>(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
        ASSERT_TRUE(gemm.Run(ta, tb, m, n, k, 0.5f, ga.as<float>(), lda, gb.as<float>(), ldb,
                             beta, gc.as<float>(), ldc)
                        .ok());
        ASSERT_EQ(cudaStreamSynchronize(ctx->stream()), cudaSuccess);
        EXPECT_CLOSE(::testing::Message() << "ta " << ta << " tb " << tb << " beta " << beta,
                     Down(gc, c.size()), c);
      }
    }
  }
}

}  // namespace
}  // namespace neodb::encoder::train
