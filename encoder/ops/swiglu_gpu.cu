// CUDA body of SwiGLU: out = SiLU(first half) ⊙ second half, math in F32.
// One block per row (no 64-bit index division per element).
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    SwiGluKernel(const T* __restrict__ u, int f, T* __restrict__ out) {
  const int64_t r = blockIdx.x;
  const T* gate = u + r * 2 * f;
  const T* lin = gate + f;
  T* dst = out + r * f;
  for (int j = threadIdx.x; j < f; j += kThreads) {
    const float g = ToF32(gate[j]);
    dst[j] = FromF32<T>(g / (1.f + __expf(-g)) * ToF32(lin[j]));
  }
}

}  // namespace

cudaError_t LaunchSwiGlu(const void* u, int64_t rows, int f, void* out, DType dtype,
                         cudaStream_t stream) {
  if (rows == 0 || f == 0) return cudaSuccess;
  return DispatchAct(dtype, [&](auto tag) {
    using T = decltype(tag);
    SwiGluKernel<T><<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(u), f, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace neodb::encoder::cuda
