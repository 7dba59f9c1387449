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

namespace neodb::encoder::cuda {
namespace {

constexpr int kD = 64;            // head dim
constexpr int kScalarBlock = 64;  // queries per block of the scalar kernel
constexpr int kBlockN = 64;       // keys per tile
constexpr int kWarps = 4;         // 16 query rows per warp
constexpr int kThreads = kWarps * 32;
constexpr int kLds = kD + 8;  // padded smem row (elements): conflict-free fragment loads
constexpr float kLog2e = 1.4426950408889634f;

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
  constexpr int kBlockM = kWarps * kRowsPerWarp;
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int seq_start = cu_seqlens[b];
  const int len = cu_seqlens[b + 1] - seq_start;
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
  const int64_t stride = static_cast<int64_t>(heads) * kD;  // elements between tokens
  const int64_t head_off = static_cast<int64_t>(seq_start) * stride + h * kD;

  // Q tile, zero rows past the end of the sequence (never stored).
  for (int i = tid; i < kBlockM * kD / 8; i += kThreads) {
    const int r = i / (kD / 8);
    const int col = (i % (kD / 8)) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (q0 + r < len) {
      val = *reinterpret_cast<const uint4*>(q + head_off + (q0 + r) * stride + col);
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

  float o[kMTiles][kD / 8][4];
  float m[kMTiles][2];  // running max (base-2 scaled) of rows g and g+8 of each m-tile
  float l[kMTiles][2];  // this thread's share of the running row sums
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.f;
  }

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
        const int64_t off = head_off + (k0 + r) * stride + col;
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

    // S = Q·Kᵀ for this warp's rows × 64 keys; each K fragment serves every m-tile.
    float s[kMTiles][kBlockN / 8][4];
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
        s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const uint32_t b0 = Ld32(&s_k[j * 8 + g][kk * 16 + 2 * c]);
        const uint32_t b1 = Ld32(&s_k[j * 8 + g][kk * 16 + 8 + 2 * c]);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) Mma<T>(s[mt][j], qa[mt][kk], b0, b1);
      }
    }

    // Scale into base 2, mask keys past the end, online softmax.
    const bool partial = k0 + kBlockN > len;
    uint32_t pa[kMTiles][kBlockN / 16][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      float mx0 = m[mt][0], mx1 = m[mt][1];
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[mt][j][e] *= scale_log2;
          if (partial && k0 + j * 8 + 2 * c + (e & 1) >= len) s[mt][j][e] = -INFINITY;
        }
        mx0 = fmaxf(mx0, fmaxf(s[mt][j][0], s[mt][j][1]));
        mx1 = fmaxf(mx1, fmaxf(s[mt][j][2], s[mt][j][3]));
      }
      // The 4 threads of a quad share rows g and g+8.
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
      // Key k0 < len is always valid, so mx0/mx1 are finite here.
      const float alpha0 = exp2f(m[mt][0] - mx0);  // exp2f(-inf) == 0 on the first tile
      const float alpha1 = exp2f(m[mt][1] - mx1);
      m[mt][0] = mx0;
      m[mt][1] = mx1;
      float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
        s[mt][j][0] = exp2f(s[mt][j][0] - mx0);
        s[mt][j][1] = exp2f(s[mt][j][1] - mx0);
        s[mt][j][2] = exp2f(s[mt][j][2] - mx1);
        s[mt][j][3] = exp2f(s[mt][j][3] - mx1);
        rs0 += s[mt][j][0] + s[mt][j][1];
        rs1 += s[mt][j][2] + s[mt][j][3];
      }
      l[mt][0] = l[mt][0] * alpha0 + rs0;
      l[mt][1] = l[mt][1] * alpha1 + rs1;
#pragma unroll
      for (int j = 0; j < kD / 8; ++j) {
        o[mt][j][0] *= alpha0;
        o[mt][j][1] *= alpha0;
        o[mt][j][2] *= alpha1;
        o[mt][j][3] *= alpha1;
      }
      // The S accumulators of key tiles 2kk, 2kk+1 are exactly the A fragment
      // of keys [16kk, 16kk+16) for P·V.
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        pa[mt][kk][0] = Pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        pa[mt][kk][1] = Pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        pa[mt][kk][2] = Pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        pa[mt][kk][3] = Pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
    }

    // O += P·V; each V fragment serves every m-tile.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
      for (int j = 0; j < kD / 8; ++j) {
        const uint32_t b0 = Ld32(&s_vt[j * 8 + g][kk * 16 + 2 * c]);
        const uint32_t b1 = Ld32(&s_vt[j * 8 + g][kk * 16 + 8 + 2 * c]);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) Mma<T>(o[mt][j], pa[mt][kk], b0, b1);
      }
    }
  }
  if (!warp_active) return;

#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float l0 = l[mt][0], l1 = l[mt][1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = 1.f / l0;
    const float inv1 = 1.f / l1;
    const int r0 = q0 + qr + mt * 16 + g;
    const int r1 = r0 + 8;
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      const int col = j * 8 + 2 * c;
      if (r0 < len) {
        *reinterpret_cast<uint32_t*>(out + head_off + r0 * stride + col) =
            Pack2<T>(o[mt][j][0] * inv0, o[mt][j][1] * inv0);
      }
      if (r1 < len) {
        *reinterpret_cast<uint32_t*>(out + head_off + r1 * stride + col) =
            Pack2<T>(o[mt][j][2] * inv1, o[mt][j][3] * inv1);
      }
    }
  }
}

// Scalar path: one thread per query, K/V tiles in shared memory as F32.
template <typename T>
__global__ void __launch_bounds__(kScalarBlock)
    AttentionScalarKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          const int32_t* __restrict__ cu_seqlens, int heads, float scale_log2,
                          T* __restrict__ out) {
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int seq_start = cu_seqlens[b];
  const int len = cu_seqlens[b + 1] - seq_start;
  const int q0 = blockIdx.x * kScalarBlock;
  if (q0 >= len) return;
  __shared__ float s_k[kBlockN][kD + 1];
  __shared__ float s_v[kBlockN][kD + 1];
  const int tid = threadIdx.x;
  const int64_t stride = static_cast<int64_t>(heads) * kD;
  const int64_t head_off = static_cast<int64_t>(seq_start) * stride + h * kD;
  const int row = q0 + tid;
  const bool active = row < len;
  float qv[kD], acc[kD];
#pragma unroll
  for (int d = 0; d < kD; ++d) {
    qv[d] = active ? ToF32(q[head_off + row * stride + d]) * scale_log2 : 0.f;
    acc[d] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (int k0 = 0; k0 < len; k0 += kBlockN) {
    __syncthreads();
    for (int i = tid; i < kBlockN * kD; i += kScalarBlock) {
      const int r = i / kD, d = i % kD;
      const bool ok = k0 + r < len;
      s_k[r][d] = ok ? ToF32(k[head_off + (k0 + r) * stride + d]) : 0.f;
      s_v[r][d] = ok ? ToF32(v[head_off + (k0 + r) * stride + d]) : 0.f;
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
    for (int d = 0; d < kD; ++d) out[head_off + row * stride + d] = FromF32<T>(acc[d] * inv);
  }
}

template <typename T, int kMTiles>
cudaError_t LaunchMma(const void* q, const void* k, const void* v, const int32_t* cu_seqlens,
                      int batch, int max_len, int heads, float scale_log2, void* out,
                      cudaStream_t stream) {
  const dim3 grid(CeilDiv(max_len, kWarps * 16 * kMTiles), static_cast<unsigned int>(heads),
                  static_cast<unsigned int>(batch));
  FlashAttentionMmaKernel<T, kMTiles><<<grid, kThreads, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), cu_seqlens,
      heads, scale_log2, static_cast<T*>(out));
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchScalar(const void* q, const void* k, const void* v, const int32_t* cu_seqlens,
                         int batch, int max_len, int heads, float scale_log2, void* out,
                         cudaStream_t stream) {
  const dim3 grid(CeilDiv(max_len, kScalarBlock), static_cast<unsigned int>(heads),
                  static_cast<unsigned int>(batch));
  AttentionScalarKernel<T><<<grid, kScalarBlock, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), cu_seqlens,
      heads, scale_log2, static_cast<T*>(out));
  return cudaGetLastError();
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
  const float scale_log2 = scale * kLog2e;
  if (dtype == DType::kF32) kernel = AttentionKernel::kScalar;
  switch (kernel) {
    case AttentionKernel::kPipelined:
      return LaunchAttentionPipelined(q, k, v, cu_seqlens, batch, max_len, heads, scale, out, dtype,
                                      stream);
    case AttentionKernel::kTiled128:
      return dtype == DType::kBF16
                 ? LaunchMma<__nv_bfloat16, 2>(q, k, v, cu_seqlens, batch, max_len, heads,
                                               scale_log2, out, stream)
                 : LaunchMma<__half, 2>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out,
                                        stream);
    case AttentionKernel::kTiled64:
      return dtype == DType::kBF16
                 ? LaunchMma<__nv_bfloat16, 1>(q, k, v, cu_seqlens, batch, max_len, heads,
                                               scale_log2, out, stream)
                 : LaunchMma<__half, 1>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out,
                                        stream);
    case AttentionKernel::kScalar:
      switch (dtype) {
        case DType::kBF16:
          return LaunchScalar<__nv_bfloat16>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2,
                                             out, stream);
        case DType::kF16:
          return LaunchScalar<__half>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out,
                                      stream);
        default:
          return LaunchScalar<float>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out,
                                     stream);
      }
  }
  return cudaErrorInvalidValue;
}

}  // namespace neodb::encoder::cuda
