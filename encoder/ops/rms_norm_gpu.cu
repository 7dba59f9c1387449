// CUDA body of RMSNorm: one block per row, F32 sum of squares reduced with
// warp shuffles, output in F32, F16 or BF16 (the next GEMM's input type).
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    RmsNormKernel(const float* __restrict__ x, const float* __restrict__ w, int cols, float eps,
                  T* __restrict__ out) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  float ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += kThreads) ss += xr[c] * xr[c];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  __shared__ float warp_sums[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int i = 0; i < kThreads / 32; ++i) total += warp_sums[i];
  const float inv = rsqrtf(total / static_cast<float>(cols) + eps);
  T* yr = out + row * cols;
  for (int c = threadIdx.x; c < cols; c += kThreads) yr[c] = FromF32<T>(xr[c] * inv * w[c]);
}

}  // namespace

cudaError_t LaunchRmsNorm(const float* x, const float* w, int64_t rows, int cols, float eps,
                          void* out, DType out_dtype, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return DispatchAct(out_dtype, [&](auto tag) {
    using T = decltype(tag);
    RmsNormKernel<T><<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(
        x, w, cols, eps, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace neodb::encoder::cuda
