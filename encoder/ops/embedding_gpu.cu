// CUDA body of the embedding lookup (and the kernel-image probe).
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

__global__ void EmbeddingGatherKernel(const float* __restrict__ table,
                                      const int32_t* __restrict__ ids, int hidden,
                                      float* __restrict__ out) {
  const int64_t t = blockIdx.x;
  const float* src = table + static_cast<int64_t>(ids[t]) * hidden;
  float* dst = out + t * hidden;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) dst[c] = src[c];
}

__global__ void ProbeKernel() {}

}  // namespace

cudaError_t CheckKernelImage() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, ProbeKernel);
}

cudaError_t LaunchEmbeddingGather(const float* table, const int32_t* ids, int64_t tokens,
                                  int hidden, float* out, cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  EmbeddingGatherKernel<<<static_cast<unsigned int>(tokens), 256, 0, stream>>>(table, ids, hidden,
                                                                               out);
  return cudaGetLastError();
}

}  // namespace neodb::encoder::cuda
