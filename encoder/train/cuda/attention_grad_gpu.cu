// CUDA training body of attention (train_kernels.h): correctness first, a
// scalar F32 kernel per (row, head) that keeps one row of scores in shared
// memory, the softmax recomputed from the saved log-sum-exp in the backward
// pass. Every output element has one owner thread summing in a fixed order:
//   forward    block (i, h): s_j = q_i·k_j/√D, lse_i, o_i = Σ_j p_ij v_j
//   backward A block (i, h): δ_i = dO_i·O_i, dS_ij = p_ij (dO_i·v_j − δ_i),
//                            dq_i = Σ_j dS_ij k_j /√D
//   backward B block (j, h): dv_j = Σ_i p_ij dO_i, dk_j = Σ_i dS_ij q_i /√D
// O(T²·D) work per sequence and head and no tensor cores: the tiled
// FlashAttention-2 backward is the next step (README).
#include <cmath>

#include "encoder/train/cuda/reduce.cuh"
#include "encoder/train/cuda/train_kernels.h"

namespace neodb::encoder::train::cuda {
namespace {

constexpr int kD = 64;  // head_dim; one thread per column
// Rows of scores kept in shared memory: a longer sequence is refused.
constexpr int64_t kMaxSharedLen = kMaxTrainSequence;

struct Geometry {
  const int64_t* offsets;
  int64_t batch, heads;
  __device__ int64_t ld_qkv() const { return 3 * heads * kD; }
  __device__ int64_t ld_o() const { return heads * kD; }
  // The sequence that holds row `row`: its first row and length.
  __device__ void SequenceOf(int64_t row, int64_t* start, int64_t* len) const {
    int64_t lo = 0, hi = batch;  // offsets[lo] <= row < offsets[hi]
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      if (offsets[mid] <= row) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    *start = offsets[lo];
    *len = offsets[lo + 1] - offsets[lo];
  }
};

__device__ __forceinline__ float Dot(const float* a, const float* b) {
  float acc = 0.f;
#pragma unroll 16
  for (int c = 0; c < kD; ++c) acc += a[c] * b[c];
  return acc;
}

__global__ void __launch_bounds__(kD)
    ForwardKernel(const float* __restrict__ qkv, Geometry g, float scale, float* __restrict__ o,
                  float* __restrict__ lse) {
  extern __shared__ float s[];
  __shared__ float q[kD];
  const int64_t i = blockIdx.x, h = blockIdx.y;
  const int t = threadIdx.x;
  int64_t start, len;
  g.SequenceOf(i, &start, &len);
  const int64_t ld = g.ld_qkv();
  q[t] = qkv[i * ld + 3 * kD * h + t];
  __syncthreads();
  float mx = -INFINITY;
  for (int64_t j = t; j < len; j += kD) {
    s[j] = scale * Dot(q, qkv + (start + j) * ld + 3 * kD * h + kD);
    mx = fmaxf(mx, s[j]);
  }
  mx = BlockMax(mx);
  float sum = 0.f;
  for (int64_t j = t; j < len; j += kD) {
    s[j] = expf(s[j] - mx);
    sum += s[j];
  }
  sum = BlockSum(sum);  // its barriers also publish s
  const float inv = 1.f / sum;
  float acc = 0.f;
  for (int64_t j = 0; j < len; ++j) acc += s[j] * qkv[(start + j) * ld + 3 * kD * h + 2 * kD + t];
  o[i * g.ld_o() + kD * h + t] = acc * inv;
  if (lse != nullptr && t == 0) lse[i * g.heads + h] = mx + logf(sum);
}

__global__ void __launch_bounds__(kD)
    BackwardQueryKernel(const float* __restrict__ qkv, const float* __restrict__ o,
                        const float* __restrict__ lse, const float* __restrict__ d_o, Geometry g,
                        float scale, float* __restrict__ delta, float* __restrict__ dqkv) {
  extern __shared__ float ds[];
  __shared__ float q[kD], dout[kD];
  const int64_t i = blockIdx.x, h = blockIdx.y;
  const int t = threadIdx.x;
  int64_t start, len;
  g.SequenceOf(i, &start, &len);
  const int64_t ld = g.ld_qkv();
  const int64_t at_o = i * g.ld_o() + kD * h;
  q[t] = qkv[i * ld + 3 * kD * h + t];
  dout[t] = d_o[at_o + t];
  const float di = BlockSum(d_o[at_o + t] * o[at_o + t]);  // publishes q, dout too
  const float l = lse[i * g.heads + h];
  for (int64_t j = t; j < len; j += kD) {
    const float* kv = qkv + (start + j) * ld + 3 * kD * h + kD;
    const float p = expf(scale * Dot(q, kv) - l);
    ds[j] = p * (Dot(dout, kv + kD) - di);
  }
  __syncthreads();
  float acc = 0.f;
  for (int64_t j = 0; j < len; ++j) acc += ds[j] * qkv[(start + j) * ld + 3 * kD * h + kD + t];
  dqkv[i * ld + 3 * kD * h + t] = acc * scale;
  if (t == 0) delta[i * g.heads + h] = di;
}

__global__ void __launch_bounds__(kD)
    BackwardKeyKernel(const float* __restrict__ qkv, const float* __restrict__ lse,
                      const float* __restrict__ d_o, const float* __restrict__ delta, Geometry g,
                      float scale, float* __restrict__ dqkv) {
  __shared__ float k[kD], v[kD], p[kD], ds[kD];
  const int64_t j = blockIdx.x, h = blockIdx.y;
  const int t = threadIdx.x;
  int64_t start, len;
  g.SequenceOf(j, &start, &len);
  const int64_t ld = g.ld_qkv(), ld_o = g.ld_o();
  k[t] = qkv[j * ld + 3 * kD * h + kD + t];
  v[t] = qkv[j * ld + 3 * kD * h + 2 * kD + t];
  __syncthreads();
  float dk = 0.f, dv = 0.f;
  for (int64_t i0 = 0; i0 < len; i0 += kD) {
    const int64_t i = start + i0 + t;
    if (i0 + t < len) {
      const float pi = expf(scale * Dot(qkv + i * ld + 3 * kD * h, k) - lse[i * g.heads + h]);
      p[t] = pi;
      ds[t] = pi * (Dot(d_o + i * ld_o + kD * h, v) - delta[i * g.heads + h]);
    }
    __syncthreads();
    const int64_t n = len - i0 < kD ? len - i0 : kD;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t row = start + i0 + r;
      dv += p[r] * d_o[row * ld_o + kD * h + t];
      dk += ds[r] * qkv[row * ld + 3 * kD * h + t];
    }
    __syncthreads();
  }
  dqkv[j * ld + 3 * kD * h + kD + t] = dk * scale;
  dqkv[j * ld + 3 * kD * h + 2 * kD + t] = dv;
}

bool Supported(int64_t rows, int64_t max_len, int64_t head_dim) {
  return head_dim == kD && max_len <= kMaxSharedLen && rows <= 0x7fffffff;
}

}  // namespace

cudaError_t LaunchAttentionForward(const float* qkv, const int64_t* offsets, int64_t batch,
                                   int64_t rows, int64_t max_len, int64_t heads, int64_t head_dim,
                                   float* o, float* lse, cudaStream_t stream) {
  if (!Supported(rows, max_len, head_dim)) return cudaErrorInvalidValue;
  if (rows == 0 || heads == 0) return cudaSuccess;
  const Geometry g{offsets, batch, heads};
  const float scale = 1.f / sqrtf(static_cast<float>(head_dim));
  const dim3 grid(static_cast<unsigned int>(rows), static_cast<unsigned int>(heads));
  const size_t shared = static_cast<size_t>(max_len) * sizeof(float);
  ForwardKernel<<<grid, kD, shared, stream>>>(qkv, g, scale, o, lse);
  return cudaGetLastError();
}

cudaError_t LaunchAttentionBackward(const float* qkv, const float* o, const float* lse,
                                    const float* d_o, const int64_t* offsets, int64_t batch,
                                    int64_t rows, int64_t max_len, int64_t heads,
                                    int64_t head_dim, float* delta, float* dqkv,
                                    cudaStream_t stream) {
  if (!Supported(rows, max_len, head_dim)) return cudaErrorInvalidValue;
  if (rows == 0 || heads == 0) return cudaSuccess;
  const Geometry g{offsets, batch, heads};
  const float scale = 1.f / sqrtf(static_cast<float>(head_dim));
  const dim3 grid(static_cast<unsigned int>(rows), static_cast<unsigned int>(heads));
  const size_t shared = static_cast<size_t>(max_len) * sizeof(float);
  BackwardQueryKernel<<<grid, kD, shared, stream>>>(qkv, o, lse, d_o, g, scale, delta, dqkv);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  BackwardKeyKernel<<<grid, kD, 0, stream>>>(qkv, lse, d_o, delta, g, scale, dqkv);
  return cudaGetLastError();
}

}  // namespace neodb::encoder::train::cuda
