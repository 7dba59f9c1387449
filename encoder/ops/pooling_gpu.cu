// CUDA body of pooling over a packed batch: the [CLS] row, or the F32 mean of
// every row of the sequence.
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

__global__ void PoolKernel(const float* __restrict__ hidden, const int32_t* __restrict__ cu,
                           int cols, bool mean, float* __restrict__ out) {
  const int b = blockIdx.x;
  const int64_t begin = cu[b];
  const int64_t end = cu[b + 1];
  for (int c = blockIdx.y * blockDim.x + threadIdx.x; c < cols; c += gridDim.y * blockDim.x) {
    float v;
    if (mean) {
      float s = 0.f;
      for (int64_t t = begin; t < end; ++t) s += hidden[t * cols + c];
      v = s / static_cast<float>(end - begin);
    } else {
      v = hidden[begin * cols + c];
    }
    out[static_cast<int64_t>(b) * cols + c] = v;
  }
}

}  // namespace

cudaError_t LaunchPool(const float* hidden, const int32_t* cu_seqlens, int batch, int cols,
                       bool mean, float* out, cudaStream_t stream) {
  if (batch == 0) return cudaSuccess;
  dim3 grid(static_cast<unsigned int>(batch), CeilDiv(cols, 128));
  PoolKernel<<<grid, 128, 0, stream>>>(hidden, cu_seqlens, cols, mean, out);
  return cudaGetLastError();
}

}  // namespace neodb::encoder::cuda
