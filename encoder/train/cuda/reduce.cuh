#pragma once
// Reductions shared by the training kernels, all in a fixed order so that a
// result is the same from run to run (no atomics).

#include <cuda_runtime.h>

#include <cstdint>

namespace neodb::encoder::train::cuda {

// The sum of `v` over the block's threads, returned to every thread.
// REQUIRES: blockDim.x a multiple of 32, at most 1024; every thread calls it.
__device__ __forceinline__ float BlockSum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  float total = 0.f;
  const int warps = blockDim.x >> 5;
  for (int i = 0; i < warps; ++i) total += warp_sums[i];
  return total;
}

// The maximum of `v` over the block's threads, returned to every thread.
// REQUIRES: as BlockSum's.
__device__ __forceinline__ float BlockMax(float v) {
  __shared__ float warp_max[32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  float m = warp_max[0];
  const int warps = blockDim.x >> 5;
  for (int i = 1; i < warps; ++i) m = fmaxf(m, warp_max[i]);
  return m;
}

// Column sums: out[c] += Σ_r value(r, c) for c < cols, r < rows. A block of
// kColumnLanes × kColumnRows threads owns 32 columns; each row lane walks the
// rows r ≡ lane (mod kColumnRows) in order, then the lanes add up in order.
constexpr int kColumnLanes = 32, kColumnRows = 8;

template <typename Value>
__global__ void __launch_bounds__(kColumnLanes* kColumnRows)
    ColumnSumKernel(int64_t rows, int64_t cols, Value value, float* out) {
  __shared__ float part[kColumnRows][kColumnLanes];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kColumnLanes + threadIdx.x;
  float acc = 0.f;
  if (c < cols) {
    for (int64_t r = threadIdx.y; r < rows; r += kColumnRows) acc += value(r, c);
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.f;
    for (int i = 0; i < kColumnRows; ++i) total += part[i][threadIdx.x];
    out[c] += total;
  }
}

template <typename Value>
cudaError_t LaunchColumnSum(int64_t rows, int64_t cols, Value value, float* out,
                            cudaStream_t stream) {
  if (rows == 0 || cols == 0 || out == nullptr) return cudaSuccess;
  const dim3 block(kColumnLanes, kColumnRows);
  const dim3 grid(static_cast<unsigned int>((cols + kColumnLanes - 1) / kColumnLanes));
  ColumnSumKernel<<<grid, block, 0, stream>>>(rows, cols, value, out);
  return cudaGetLastError();
}

}  // namespace neodb::encoder::train::cuda
