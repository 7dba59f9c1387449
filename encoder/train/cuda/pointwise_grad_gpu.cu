// CUDA training bodies of the pointwise and layout ops (train_kernels.h):
// biases, RoPE, the q | k | v interleave, SwiGLU, GELU, the embeddings. A
// grid-stride loop per element; sums over rows (bias, position and token
// embedding gradients) have one owner thread per output element.
#include <cmath>

#include "encoder/train/cuda/reduce.cuh"
#include "encoder/train/cuda/train_kernels.h"

namespace neodb::encoder::train::cuda {
namespace {

constexpr int kThreads = 256;

unsigned int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(b < 65535 * 16 ? b : 65535 * 16);
}

// Runs fn(i) for i < n over a grid-stride loop.
template <typename Fn>
__global__ void __launch_bounds__(kThreads) ForEachKernel(int64_t n, Fn fn) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    fn(i);
  }
}

template <typename Fn>
cudaError_t ForEach(int64_t n, cudaStream_t stream, Fn fn) {
  if (n <= 0) return cudaSuccess;
  ForEachKernel<<<Blocks(n), kThreads, 0, stream>>>(n, fn);
  return cudaGetLastError();
}

struct Strided {
  const float* dy;
  int64_t ld, col0;
  __device__ float operator()(int64_t r, int64_t c) const { return dy[r * ld + col0 + c]; }
};

__device__ __forceinline__ float Sigmoid(float z) { return 1.f / (1.f + expf(-z)); }

__global__ void __launch_bounds__(kThreads)
    EmbeddingBackwardKernel(const int32_t* __restrict__ unique_ids,
                            const int32_t* __restrict__ row_begin,
                            const int32_t* __restrict__ token_rows, const float* __restrict__ dx,
                            int64_t dim, float* __restrict__ d_table) {
  const int64_t u = blockIdx.x;
  float* dst = d_table + static_cast<int64_t>(unique_ids[u]) * dim;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) {
    float acc = 0.f;
    for (int32_t k = row_begin[u]; k < row_begin[u + 1]; ++k) {
      acc += dx[static_cast<int64_t>(token_rows[k]) * dim + c];
    }
    dst[c] += acc;
  }
}

}  // namespace

cudaError_t LaunchAddInto(const float* x, int64_t n, float* y, cudaStream_t stream) {
  return ForEach(n, stream, [=] __device__(int64_t i) { y[i] += x[i]; });
}

cudaError_t LaunchAddBias(const float* b, int64_t rows, int64_t cols, int64_t ld, int64_t col0,
                          float* y, cudaStream_t stream) {
  return ForEach(rows * cols, stream, [=] __device__(int64_t i) {
    const int64_t r = i / cols, c = i % cols;
    y[r * ld + col0 + c] += b[c];
  });
}

cudaError_t LaunchBiasBackward(const float* dy, int64_t rows, int64_t cols, int64_t ld,
                               int64_t col0, float* db, cudaStream_t stream) {
  return LaunchColumnSum(rows, cols, Strided{dy, ld, col0}, db, stream);
}

cudaError_t LaunchRope(float* data, int64_t rows, int64_t ld, const int32_t* positions,
                       int64_t heads, int64_t col0, int64_t head_stride, const float* cos,
                       const float* sin, int64_t half, bool inverse, cudaStream_t stream) {
  return ForEach(rows * heads * half, stream, [=] __device__(int64_t n) {
    const int64_t i = n % half, h = (n / half) % heads, r = n / (half * heads);
    const int64_t p = positions[r];
    const float c = cos[p * half + i];
    const float s = inverse ? -sin[p * half + i] : sin[p * half + i];
    float* v = data + r * ld + col0 + h * head_stride;
    const float a = v[2 * i], b = v[2 * i + 1];
    v[2 * i] = a * c - b * s;
    v[2 * i + 1] = a * s + b * c;
  });
}

// Element n of the interleaved [rows, 3·H·D]: row r, head h, part p, column
// i, at r·3HD + 3Dh + pD + i; in the blocks at r·3HD + pHD + hD + i.
cudaError_t LaunchInterleaveQkv(const float* blocks, int64_t rows, int64_t heads, int64_t d,
                                float* interleaved, cudaStream_t stream) {
  const int64_t c = heads * d;
  return ForEach(rows * 3 * c, stream, [=] __device__(int64_t n) {
    const int64_t r = n / (3 * c), rest = n % (3 * c);
    const int64_t h = rest / (3 * d), p = (rest % (3 * d)) / d, i = rest % d;
    interleaved[n] = blocks[r * 3 * c + p * c + h * d + i];
  });
}

cudaError_t LaunchAddDeinterleavedQkv(const float* interleaved, int64_t rows, int64_t heads,
                                      int64_t d, float* blocks, cudaStream_t stream) {
  const int64_t c = heads * d;
  return ForEach(rows * 3 * c, stream, [=] __device__(int64_t n) {
    const int64_t r = n / (3 * c), rest = n % (3 * c);
    const int64_t h = rest / (3 * d), p = (rest % (3 * d)) / d, i = rest % d;
    blocks[r * 3 * c + p * c + h * d + i] += interleaved[n];
  });
}

cudaError_t LaunchSwiGluForward(const float* u, int64_t rows, int64_t f, float* s,
                                cudaStream_t stream) {
  return ForEach(rows * f, stream, [=] __device__(int64_t n) {
    const int64_t r = n / f, j = n % f;
    const float g = u[r * 2 * f + j], l = u[r * 2 * f + f + j];
    s[n] = g * Sigmoid(g) * l;
  });
}

// d/dg SiLU(g) = σ(g) · (1 + g · (1 − σ(g))).
cudaError_t LaunchSwiGluBackward(const float* u, const float* ds, int64_t rows, int64_t f,
                                 float* du, cudaStream_t stream) {
  return ForEach(rows * f, stream, [=] __device__(int64_t n) {
    const int64_t r = n / f, j = n % f;
    const float g = u[r * 2 * f + j], l = u[r * 2 * f + f + j];
    const float sg = Sigmoid(g);
    du[r * 2 * f + f + j] = ds[n] * g * sg;
    du[r * 2 * f + j] = ds[n] * l * sg * (1.f + g * (1.f - sg));
  });
}

cudaError_t LaunchGeluForward(const float* u, int64_t n, float* g, cudaStream_t stream) {
  return ForEach(n, stream, [=] __device__(int64_t i) {
    const float v = u[i];
    g[i] = 0.5f * v * (1.f + erff(v * static_cast<float>(M_SQRT1_2)));
  });
}

cudaError_t LaunchGeluBackward(const float* u, const float* dg, int64_t n, float* du,
                               cudaStream_t stream) {
  constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1/√(2π)
  return ForEach(n, stream, [=] __device__(int64_t i) {
    const float v = u[i];
    const float d = 0.5f * (1.f + erff(v * static_cast<float>(M_SQRT1_2))) +
                    v * kInvSqrt2Pi * expf(-0.5f * v * v);
    du[i] = dg[i] * d;
  });
}

cudaError_t LaunchEmbeddingForward(const int32_t* ids, int64_t rows, const float* table,
                                   int64_t dim, float* x, cudaStream_t stream) {
  return ForEach(rows * dim, stream, [=] __device__(int64_t n) {
    const int64_t r = n / dim, c = n % dim;
    x[n] = table[static_cast<int64_t>(ids[r]) * dim + c];
  });
}

cudaError_t LaunchEmbeddingBackward(const int32_t* unique_ids, const int32_t* row_begin,
                                    const int32_t* token_rows, int64_t n_unique, const float* dx,
                                    int64_t dim, float* d_table, cudaStream_t stream) {
  if (n_unique == 0) return cudaSuccess;
  EmbeddingBackwardKernel<<<static_cast<unsigned int>(n_unique), kThreads, 0, stream>>>(
      unique_ids, row_begin, token_rows, dx, dim, d_table);
  return cudaGetLastError();
}

cudaError_t LaunchPositionEmbeddingForward(const float* table, const int32_t* positions,
                                           int64_t rows, int64_t dim, float* x,
                                           cudaStream_t stream) {
  return ForEach(rows * dim, stream, [=] __device__(int64_t n) {
    const int64_t r = n / dim, c = n % dim;
    x[n] += table[static_cast<int64_t>(positions[r]) * dim + c];
  });
}

cudaError_t LaunchPositionEmbeddingBackward(const float* dx, const int64_t* offsets,
                                            int64_t batch, int64_t max_len, int64_t dim,
                                            float* d_table, cudaStream_t stream) {
  return ForEach(max_len * dim, stream, [=] __device__(int64_t n) {
    const int64_t p = n / dim, c = n % dim;
    float acc = 0.f;
    for (int64_t b = 0; b < batch; ++b) {
      if (offsets[b] + p < offsets[b + 1]) acc += dx[(offsets[b] + p) * dim + c];
    }
    d_table[n] += acc;
  });
}

cudaError_t LaunchAdamWStep(float* params, const float* grads, float* m, float* v,
                            const uint8_t* decay_mask, const uint8_t* frozen, int64_t n,
                            const AdamWStepArgs& args, cudaStream_t stream) {
  const AdamWStepArgs a = args;
  return ForEach(n, stream, [=] __device__(int64_t i) {
    if (frozen != nullptr && frozen[i]) return;
    const float g = grads[i];
    m[i] = a.b1 * m[i] + (1 - a.b1) * g;
    v[i] = a.b2 * v[i] + (1 - a.b2) * g * g;
    if (decay_mask[i]) params[i] *= a.decay;
    params[i] -= a.step_size * m[i] / (sqrtf(v[i]) * a.inv_sqrt_bc2 + a.eps);
  });
}

}  // namespace neodb::encoder::train::cuda
