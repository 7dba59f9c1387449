// CUDA body of bidirectional attention over a packed variable-length batch.
//
// F16/BF16: a FlashAttention-2-style kernel. A block of 4 warps owns 64
// queries of one (sequence, head); each warp owns 16 query rows and keeps its
// Q fragments, its output accumulator (16 × 64, F32) and the running row max
// and row sum in registers. Keys/values stream through shared memory in tiles
// of 64; S = Q·Kᵀ and O += P·V run on tensor cores (mma.sync.m16n8k16, F32
// accumulate); the softmax is online, in F32, in base 2. Memory is linear in
// the sequence length: no [T, T] matrix exists anywhere.
//
// F32: the same tiling with scalar F32 math (one thread per query), for the
// F32 compute mode and as a cross-check.
//
// Fragment layouts: encoder/cuda/mma.cuh. The default kernel of the model is
// the software-pipelined variant in attention_pipelined_gpu.cu; the kernels
// here are its fallbacks and cross-checks.
#include <cstdint>
#include <type_traits>

#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"
#include "encoder/cuda/mma.cuh"
#include "encoder/ops/attention_flash_gpu.cuh"

namespace neodb::encoder::cuda {
namespace {

using flash::kBlockN;
using flash::kD;
using flash::kLds;
constexpr int kScalarBlock = 64;  // queries per block of the scalar kernel
constexpr int kWarps = 4;         // 16 query rows per warp
constexpr int kThreads = kWarps * 32;
// Queries per block of the tensor-core kernel with kMTiles m-tiles per warp.
template <int kMTiles>
constexpr int kMmaBlockM = kWarps * 16 * kMTiles;

// kMTiles = query m-tiles (16 rows each) per warp: 1 → 64 queries per block,
// 2 → 128 queries per block, where every K/V fragment loaded from shared
// memory feeds two mma instead of one (half the shared-memory traffic per
// tensor-core op). Warps whose rows all lie past the end of the sequence
// still help load tiles but skip the math.
template <typename T, int kMTiles>
__global__ void __launch_bounds__(kThreads)
    FlashAttentionMmaKernel(const T* __restrict__ q, const T* __restrict__ k,
                            const T* __restrict__ v, const int32_t* __restrict__ cu_seqlens,
                            int heads, float scale_log2, T* __restrict__ out) {
  constexpr int kRowsPerWarp = 16 * kMTiles;
  constexpr int kBlockM = kMmaBlockM<kMTiles>;
  const flash::SequenceHead sh = flash::BlockSequenceHead(cu_seqlens, heads);
  const int len = sh.len;
  const int q0 = blockIdx.x * kBlockM;
  if (q0 >= len) return;  // grid is sized for the longest sequence

  __shared__ __align__(16) T s_q[kBlockM][kLds];
  __shared__ __align__(16) T s_k[kBlockN][kLds];
  __shared__ __align__(16) T s_vt[kD][kBlockN + 8];  // V transposed: [dim][key]

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;
  const int c = lane & 3;

  // Q tile, zero rows past the end of the sequence (never stored).
  for (int i = tid; i < kBlockM * kD / 8; i += kThreads) {
    const int r = i / (kD / 8);
    const int col = (i % (kD / 8)) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (q0 + r < len) {
      val = *reinterpret_cast<const uint4*>(q + sh.head_off + (q0 + r) * sh.stride + col);
    }
    *reinterpret_cast<uint4*>(&s_q[r][col]) = val;
  }
  __syncthreads();

  const int qr = warp * kRowsPerWarp;
  const bool warp_active = q0 + qr < len;  // warp-uniform
  uint32_t qa[kMTiles][kD / 16][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    const int r = qr + mt * 16 + g;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      qa[mt][kk][0] = Ld32(&s_q[r][kk * 16 + 2 * c]);
      qa[mt][kk][1] = Ld32(&s_q[r + 8][kk * 16 + 2 * c]);
      qa[mt][kk][2] = Ld32(&s_q[r][kk * 16 + 8 + 2 * c]);
      qa[mt][kk][3] = Ld32(&s_q[r + 8][kk * 16 + 8 + 2 * c]);
    }
  }

  flash::Accumulators<kMTiles> acc;
  acc.Zero();

  for (int k0 = 0; k0 < len; k0 += kBlockN) {
    __syncthreads();  // every warp is done with the previous K/V tile
    for (int i = tid; i < kBlockN * kD / 8; i += kThreads) {
      // Consecutive threads take consecutive keys so that the transposed
      // stores into s_vt hit distinct banks.
      const int r = i % kBlockN;
      const int col = (i / kBlockN) * 8;
      uint4 kv = make_uint4(0, 0, 0, 0);
      uint4 vv = make_uint4(0, 0, 0, 0);
      if (k0 + r < len) {
        const int64_t off = sh.head_off + (k0 + r) * sh.stride + col;
        kv = *reinterpret_cast<const uint4*>(k + off);
        vv = *reinterpret_cast<const uint4*>(v + off);
      }
      *reinterpret_cast<uint4*>(&s_k[r][col]) = kv;
      const T* ve = reinterpret_cast<const T*>(&vv);
#pragma unroll
      for (int e = 0; e < 8; ++e) s_vt[col + e][r] = ve[e];
    }
    __syncthreads();
    if (!warp_active) continue;

    float s[kMTiles][kBlockN / 8][4];
    flash::TileScores<T, kMTiles>(s_k, qa, g, c, s);
    uint32_t pa[kMTiles][kBlockN / 16][4];
    flash::OnlineSoftmax<T, kMTiles>(s, k0, len, c, scale_log2, acc, pa);

    // O += P·V; each V fragment serves every m-tile.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
      for (int j = 0; j < kD / 8; ++j) {
        const uint32_t b0 = Ld32(&s_vt[j * 8 + g][kk * 16 + 2 * c]);
        const uint32_t b1 = Ld32(&s_vt[j * 8 + g][kk * 16 + 8 + 2 * c]);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) Mma<T>(acc.o[mt][j], pa[mt][kk], b0, b1);
      }
    }
  }
  if (warp_active) flash::StoreOutput<T, kMTiles>(acc, q0 + qr, g, c, sh, out);
}

// Scalar path: one thread per query, K/V tiles in shared memory as F32.
template <typename T>
__global__ void __launch_bounds__(kScalarBlock)
    AttentionScalarKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          const int32_t* __restrict__ cu_seqlens, int heads, float scale_log2,
                          T* __restrict__ out) {
  const flash::SequenceHead sh = flash::BlockSequenceHead(cu_seqlens, heads);
  const int len = sh.len;
  const int q0 = blockIdx.x * kScalarBlock;
  if (q0 >= len) return;
  __shared__ float s_k[kBlockN][kD + 1];
  __shared__ float s_v[kBlockN][kD + 1];
  const int tid = threadIdx.x;
  const int row = q0 + tid;
  const bool active = row < len;
  float qv[kD], acc[kD];
#pragma unroll
  for (int d = 0; d < kD; ++d) {
    qv[d] = active ? ToF32(q[sh.head_off + row * sh.stride + d]) * scale_log2 : 0.f;
    acc[d] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (int k0 = 0; k0 < len; k0 += kBlockN) {
    __syncthreads();
    for (int i = tid; i < kBlockN * kD; i += kScalarBlock) {
      const int r = i / kD, d = i % kD;
      const bool ok = k0 + r < len;
      s_k[r][d] = ok ? ToF32(k[sh.head_off + (k0 + r) * sh.stride + d]) : 0.f;
      s_v[r][d] = ok ? ToF32(v[sh.head_off + (k0 + r) * sh.stride + d]) : 0.f;
    }
    __syncthreads();
    const int n = min(kBlockN, len - k0);
    for (int j = 0; j < n; ++j) {
      float sc = 0.f;
#pragma unroll
      for (int d = 0; d < kD; ++d) sc += qv[d] * s_k[j][d];
      if (sc > m) {
        const float alpha = exp2f(m - sc);
        l *= alpha;
#pragma unroll
        for (int d = 0; d < kD; ++d) acc[d] *= alpha;
        m = sc;
      }
      const float p = exp2f(sc - m);
      l += p;
#pragma unroll
      for (int d = 0; d < kD; ++d) acc[d] += p * s_v[j][d];
    }
  }
  if (active) {
    const float inv = 1.f / l;
#pragma unroll
    for (int d = 0; d < kD; ++d) {
      out[sh.head_off + row * sh.stride + d] = FromF32<T>(acc[d] * inv);
    }
  }
}

}  // namespace

cudaError_t LaunchAttention(const void* q, const void* k, const void* v, const int32_t* cu_seqlens,
                            int batch, int max_len, int heads, int head_dim, float scale, void* out,
                            DType dtype, cudaStream_t stream, AttentionKernel kernel) {
  if (head_dim != kD || heads <= 0 || max_len < 0) return cudaErrorInvalidValue;
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return cudaErrorInvalidValue;
  }
  if (batch == 0 || max_len == 0) return cudaSuccess;
  if (batch > 65535 || heads > 65535) return cudaErrorInvalidValue;
  const float scale_log2 = scale * flash::kLog2e;
  // Every kernel here takes the same arguments over the same kind of grid.
  auto launch = [&](auto kernel_fn, int block_m, int threads) {
    return flash::LaunchOverSequenceHeads(kernel_fn, block_m, threads, q, k, v, cu_seqlens, batch,
                                          max_len, heads, scale_log2, out, stream);
  };
  const bool bf16 = dtype == DType::kBF16;
  if (dtype == DType::kF32) kernel = AttentionKernel::kScalar;
  switch (kernel) {
    case AttentionKernel::kPipelined:
      return LaunchAttentionPipelined(q, k, v, cu_seqlens, batch, max_len, heads, scale, out, dtype,
                                      stream);
    case AttentionKernel::kTiled128:
      return bf16 ? launch(FlashAttentionMmaKernel<__nv_bfloat16, 2>, kMmaBlockM<2>, kThreads)
                  : launch(FlashAttentionMmaKernel<__half, 2>, kMmaBlockM<2>, kThreads);
    case AttentionKernel::kTiled64:
      return bf16 ? launch(FlashAttentionMmaKernel<__nv_bfloat16, 1>, kMmaBlockM<1>, kThreads)
                  : launch(FlashAttentionMmaKernel<__half, 1>, kMmaBlockM<1>, kThreads);
    case AttentionKernel::kScalar:
      switch (dtype) {
        case DType::kBF16:
          return launch(AttentionScalarKernel<__nv_bfloat16>, kScalarBlock, kScalarBlock);
        case DType::kF16:
          return launch(AttentionScalarKernel<__half>, kScalarBlock, kScalarBlock);
        default:
          return launch(AttentionScalarKernel<float>, kScalarBlock, kScalarBlock);
      }
  }
  return cudaErrorInvalidValue;
}

}  // namespace neodb::encoder::cuda
