// CUDA body of SwiGLU: out = SiLU(first half) ⊙ second half, math in F32.
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

template <typename T>
__global__ void SwiGluKernel(const T* __restrict__ u, int64_t n, int f, T* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / f;
    const int j = static_cast<int>(i - r * f);
    const float g = ToF32(u[r * 2 * f + j]);
    const float l = ToF32(u[r * 2 * f + f + j]);
    out[i] = FromF32<T>(g / (1.f + expf(-g)) * l);
  }
}

}  // namespace

cudaError_t LaunchSwiGlu(const void* u, int64_t rows, int f, void* out, DType dtype,
                         cudaStream_t stream) {
  const int64_t n = rows * f;
  if (n == 0) return cudaSuccess;
  const unsigned int blocks = CeilDiv(n, 256) < 65535u * 8 ? CeilDiv(n, 256) : 65535u * 8;
  return DispatchAct(dtype, [&](auto tag) {
    using T = decltype(tag);
    SwiGluKernel<T><<<blocks, 256, 0, stream>>>(static_cast<const T*>(u), n, f,
                                                static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace neodb::encoder::cuda
