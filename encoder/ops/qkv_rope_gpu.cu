// CUDA body of the head-interleaved QKV split with RoPE (NEOBERT.md §3).
// One block per token; one thread per (head, pair i): it rotates q and k
// pair (2i, 2i+1) and copies the same two elements of v.
#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {
namespace {

constexpr int kHeadDim = 64;
constexpr int kPairs = kHeadDim / 2;

template <typename T>
__global__ void QkvRopeKernel(const T* __restrict__ qkv, const int32_t* __restrict__ positions,
                              int heads, float theta, T* __restrict__ q, T* __restrict__ k,
                              T* __restrict__ v) {
  const int64_t t = blockIdx.x;
  // As the reference: inv_freq = 1 / theta^(2i/64) in F32, angle = pos · inv_freq in F32.
  const float pos = static_cast<float>(positions[t]);
  const T* src = qkv + t * 3 * heads * kHeadDim;
  for (int idx = threadIdx.x; idx < heads * kPairs; idx += blockDim.x) {
    const int h = idx / kPairs;
    const int i = idx - h * kPairs;
    const float inv_freq =
        1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(kHeadDim));
    float s, c;
    sincosf(pos * inv_freq, &s, &c);
    const T* head = src + h * 3 * kHeadDim;
    const int64_t o = (t * heads + h) * kHeadDim + 2 * i;
    const float q0 = ToF32(head[2 * i]), q1 = ToF32(head[2 * i + 1]);
    const float k0 = ToF32(head[kHeadDim + 2 * i]), k1 = ToF32(head[kHeadDim + 2 * i + 1]);
    q[o] = FromF32<T>(q0 * c - q1 * s);
    q[o + 1] = FromF32<T>(q0 * s + q1 * c);
    k[o] = FromF32<T>(k0 * c - k1 * s);
    k[o + 1] = FromF32<T>(k0 * s + k1 * c);
    v[o] = head[2 * kHeadDim + 2 * i];
    v[o + 1] = head[2 * kHeadDim + 2 * i + 1];
  }
}

}  // namespace

cudaError_t LaunchQkvRope(const void* qkv, const int32_t* positions, int64_t tokens, int heads,
                          float theta, void* q, void* k, void* v, DType dtype,
                          cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  return DispatchAct(dtype, [&](auto tag) {
    using T = decltype(tag);
    QkvRopeKernel<T><<<static_cast<unsigned int>(tokens), 128, 0, stream>>>(
        static_cast<const T*>(qkv), positions, heads, theta, static_cast<T*>(q), static_cast<T*>(k),
        static_cast<T*>(v));
    return cudaGetLastError();
  });
}

}  // namespace neodb::encoder::cuda
