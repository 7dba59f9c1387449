#pragma once
// Device-side helpers shared by the *_gpu.cu kernels: loading and storing an
// activation element as F32, and dispatching a launcher on the activation
// dtype. Only three instantiations per kernel (float, half, bf16), on purpose:
// compile time on CI matters more than a template for every shape.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "encoder/core/dtype.h"

namespace neodb::encoder::cuda {

__device__ __forceinline__ float ToF32(float x) { return x; }
__device__ __forceinline__ float ToF32(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToF32(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T FromF32(float x);
template <>
__device__ __forceinline__ float FromF32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half FromF32<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromF32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Calls f(T{}) with T the element type of `dtype`; returns
// cudaErrorInvalidValue for a dtype that is not an activation type.
template <typename F>
cudaError_t DispatchAct(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(float{});
    case DType::kF16:
      return f(__half{});
    case DType::kBF16:
      return f(__nv_bfloat16{});
    default:
      return cudaErrorInvalidValue;
  }
}

inline unsigned int CeilDiv(long long a, long long b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

}  // namespace neodb::encoder::cuda
