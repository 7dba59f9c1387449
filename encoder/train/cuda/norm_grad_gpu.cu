// CUDA training bodies of RMSNorm and LayerNorm (train_kernels.h): forward
// keeping the row statistics, backward to the input (one block per row) and
// to the weights (column sums in a fixed order).
#include "encoder/train/cuda/reduce.cuh"
#include "encoder/train/cuda/train_kernels.h"

namespace neodb::encoder::train::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    RmsNormForwardKernel(const float* __restrict__ x, const float* __restrict__ w, int64_t cols,
                         float eps, float* __restrict__ y, float* __restrict__ rstd) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) ss += xr[c] * xr[c];
  const float inv = rsqrtf(BlockSum(ss) / static_cast<float>(cols) + eps);
  float* yr = y + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = xr[c] * inv * w[c];
  if (rstd != nullptr && threadIdx.x == 0) rstd[row] = inv;
}

__global__ void __launch_bounds__(kThreads)
    RmsNormBackwardKernel(const float* __restrict__ x, const float* __restrict__ w,
                          const float* __restrict__ rstd, const float* __restrict__ dy,
                          int64_t cols, float* __restrict__ dx) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  const float* dyr = dy + row * cols;
  float dot = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) dot += dyr[c] * w[c] * xr[c];
  const float inv = rstd[row];
  const float coef = BlockSum(dot) / static_cast<float>(cols) * inv * inv * inv;
  float* dxr = dx + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    dxr[c] += inv * dyr[c] * w[c] - xr[c] * coef;
  }
}

__global__ void __launch_bounds__(kThreads)
    LayerNormForwardKernel(const float* __restrict__ x, const float* __restrict__ w,
                           const float* __restrict__ b, int64_t cols, float eps,
                           float* __restrict__ y, float* __restrict__ mean,
                           float* __restrict__ rstd) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  float sum = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float mu = BlockSum(sum) / static_cast<float>(cols);
  float sq = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float d = xr[c] - mu;
    sq += d * d;
  }
  const float rs = rsqrtf(BlockSum(sq) / static_cast<float>(cols) + eps);
  float* yr = y + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mu) * rs * w[c] + b[c];
  if (threadIdx.x == 0) {
    if (mean != nullptr) mean[row] = mu;
    if (rstd != nullptr) rstd[row] = rs;
  }
}

__global__ void __launch_bounds__(kThreads)
    LayerNormBackwardKernel(const float* __restrict__ x, const float* __restrict__ w,
                            const float* __restrict__ mean, const float* __restrict__ rstd,
                            const float* __restrict__ dy, int64_t cols, float* __restrict__ dx) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  const float* dyr = dy + row * cols;
  const float mu = mean[row], rs = rstd[row];
  float sum_g = 0.f, sum_gx = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float g = dyr[c] * w[c];
    sum_g += g;
    sum_gx += g * (xr[c] - mu) * rs;
  }
  const float inv_n = 1.f / static_cast<float>(cols);
  const float mg = BlockSum(sum_g) * inv_n;
  const float mgx = BlockSum(sum_gx) * inv_n;
  float* dxr = dx + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float xh = (xr[c] - mu) * rs;
    dxr[c] += rs * (dyr[c] * w[c] - mg - xh * mgx);
  }
}

// dw's addend at (r, c) for RMSNorm: dy·x·rstd.
struct RmsNormWeightGrad {
  const float *x, *dy, *rstd;
  int64_t cols;
  __device__ float operator()(int64_t r, int64_t c) const {
    return dy[r * cols + c] * x[r * cols + c] * rstd[r];
  }
};
// LayerNorm: dy·x̂ (dw) and dy (db).
struct LayerNormWeightGrad {
  const float *x, *dy, *mean, *rstd;
  int64_t cols;
  __device__ float operator()(int64_t r, int64_t c) const {
    return dy[r * cols + c] * (x[r * cols + c] - mean[r]) * rstd[r];
  }
};
struct Plain {
  const float* dy;
  int64_t ld, col0;
  __device__ float operator()(int64_t r, int64_t c) const { return dy[r * ld + col0 + c]; }
};

}  // namespace

cudaError_t LaunchRmsNormForward(const float* x, const float* w, int64_t rows, int64_t cols,
                                 float eps, float* y, float* rstd, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  RmsNormForwardKernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(x, w, cols, eps,
                                                                                y, rstd);
  return cudaGetLastError();
}

cudaError_t LaunchRmsNormBackward(const float* x, const float* w, const float* rstd,
                                  const float* dy, int64_t rows, int64_t cols, float* dx,
                                  float* dw, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (dw != nullptr) {
    const cudaError_t err =
        LaunchColumnSum(rows, cols, RmsNormWeightGrad{x, dy, rstd, cols}, dw, stream);
    if (err != cudaSuccess) return err;
  }
  if (dx == nullptr) return cudaSuccess;
  RmsNormBackwardKernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(x, w, rstd, dy,
                                                                                 cols, dx);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormForward(const float* x, const float* w, const float* b, int64_t rows,
                                   int64_t cols, float eps, float* y, float* mean, float* rstd,
                                   cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  LayerNormForwardKernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(
      x, w, b, cols, eps, y, mean, rstd);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormBackward(const float* x, const float* w, const float* mean,
                                    const float* rstd, const float* dy, int64_t rows,
                                    int64_t cols, float* dx, float* dw, float* db,
                                    cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  cudaError_t err = LaunchColumnSum(rows, cols, LayerNormWeightGrad{x, dy, mean, rstd, cols}, dw,
                                    stream);
  if (err != cudaSuccess) return err;
  err = LaunchColumnSum(rows, cols, Plain{dy, cols, 0}, db, stream);
  if (err != cudaSuccess || dx == nullptr) return err;
  LayerNormBackwardKernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(
      x, w, mean, rstd, dy, cols, dx);
  return cudaGetLastError();
}

}  // namespace neodb::encoder::train::cuda
