// CUDA body of attention, the model's default variant for F16/BF16: the
// 128-query tensor-core kernel of attention_gpu.cu with the K/V tiles
// software-pipelined. Tile i+1 streams into the second of two shared-memory
// buffers (cp.async) while the warps compute on tile i, and V stays row-major
// in shared memory, read as transposed B fragments with ldmatrix.trans (no
// scalar transposing stores). Q fragments come straight from global memory.
// Same math, same contracts, same fragment layouts (encoder/cuda/mma.cuh).
#include <cstdint>

#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/kernels.h"
#include "encoder/cuda/mma.cuh"

namespace neodb::encoder::cuda {
namespace {

constexpr int kD = 64;       // head dim
constexpr int kBlockN = 64;  // keys per tile
constexpr int kWarps = 4;
constexpr int kMTiles = 2;  // 16-row m-tiles per warp: 32 query rows
constexpr int kRowsPerWarp = 16 * kMTiles;
constexpr int kBlockM = kWarps * kRowsPerWarp;  // 128 queries per block
constexpr int kThreads = kWarps * 32;
constexpr int kLds = kD + 8;  // padded smem row: conflict-free LDS.32 and ldmatrix
constexpr float kLog2e = 1.4426950408889634f;

template <typename T>
struct __align__(16) Tiles {
  T k[2][kBlockN][kLds];
  T v[2][kBlockN][kLds];
};

// Enqueues the copy of keys/values [k0, k0 + 64) into buffer `buf`; rows past
// the end of the sequence are zero-filled.
template <typename T>
__device__ __forceinline__ void LoadTile(Tiles<T>& t, int buf, const T* k, const T* v,
                                         int64_t head_off, int64_t stride, int k0, int len,
                                         int tid) {
#pragma unroll
  for (int i = tid; i < kBlockN * kD / 8; i += kThreads) {
    const int r = i / (kD / 8);
    const int col = (i % (kD / 8)) * 8;
    const bool valid = k0 + r < len;
    // A valid address even when nothing is read.
    const int64_t off = head_off + (valid ? k0 + r : 0) * stride + col;
    CpAsync16(&t.k[buf][r][col], k + off, valid);
    CpAsync16(&t.v[buf][r][col], v + off, valid);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    FlashAttentionPipelinedKernel(const T* __restrict__ q, const T* __restrict__ k,
                                  const T* __restrict__ v, const int32_t* __restrict__ cu_seqlens,
                                  int heads, float scale_log2, T* __restrict__ out) {
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int seq_start = cu_seqlens[b];
  const int len = cu_seqlens[b + 1] - seq_start;
  const int q0 = blockIdx.x * kBlockM;
  if (q0 >= len) return;  // grid is sized for the longest sequence

  __shared__ Tiles<T> tiles;

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;
  const int c = lane & 3;
  const int64_t stride = static_cast<int64_t>(heads) * kD;  // elements between tokens
  const int64_t head_off = static_cast<int64_t>(seq_start) * stride + h * kD;
  const int num_tiles = (len + kBlockN - 1) / kBlockN;

  // Start streaming tile 0 before touching Q.
  LoadTile(tiles, 0, k, v, head_off, stride, 0, len, tid);
  CpAsyncCommit();

  const int qr = q0 + warp * kRowsPerWarp;  // this warp's first query row
  const bool warp_active = qr < len;        // warp-uniform
  // Q fragments from global memory; rows past the end are zero (never stored).
  uint32_t qa[kMTiles][kD / 16][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    const int r0 = qr + mt * 16 + g;
    const int r1 = r0 + 8;
    const T* row0 = q + head_off + static_cast<int64_t>(r0) * stride;
    const T* row1 = q + head_off + static_cast<int64_t>(r1) * stride;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const int col = kk * 16 + 2 * c;
      qa[mt][kk][0] = r0 < len ? Ld32(row0 + col) : 0u;
      qa[mt][kk][1] = r1 < len ? Ld32(row1 + col) : 0u;
      qa[mt][kk][2] = r0 < len ? Ld32(row0 + col + 8) : 0u;
      qa[mt][kk][3] = r1 < len ? Ld32(row1 + col + 8) : 0u;
    }
  }

  float o[kMTiles][kD / 8][4];
  float m[kMTiles][2];  // running max (base-2 scaled) of rows g and g+8 of each m-tile
  float l[kMTiles][2];  // this thread's share of the running row sums
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.f;
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int buf = tile & 1;
    const int k0 = tile * kBlockN;
    // Prefetch the next tile into the other buffer (freed by the barrier at
    // the end of the previous iteration), then wait for this one.
    if (tile + 1 < num_tiles) {
      LoadTile(tiles, buf ^ 1, k, v, head_off, stride, k0 + kBlockN, len, tid);
      CpAsyncCommit();
      CpAsyncWait<1>();
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();

    if (warp_active) {
      // S = Q·Kᵀ for 32 rows × 64 keys; each K fragment serves both m-tiles.
      float s[kMTiles][kBlockN / 8][4];
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
        }
#pragma unroll
        for (int kk = 0; kk < kD / 16; ++kk) {
          const uint32_t b0 = Ld32(&tiles.k[buf][j * 8 + g][kk * 16 + 2 * c]);
          const uint32_t b1 = Ld32(&tiles.k[buf][j * 8 + g][kk * 16 + 8 + 2 * c]);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) Mma<T>(s[mt][j], qa[mt][kk], b0, b1);
        }
      }

      // Scale into base 2, mask keys past the end, online softmax, pack P.
      const bool partial = k0 + kBlockN > len;
      uint32_t pa[kMTiles][kBlockN / 16][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        float mx0 = m[mt][0], mx1 = m[mt][1];
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[mt][j][e] *= scale_log2;
            if (partial && k0 + j * 8 + 2 * c + (e & 1) >= len) s[mt][j][e] = -INFINITY;
          }
          mx0 = fmaxf(mx0, fmaxf(s[mt][j][0], s[mt][j][1]));
          mx1 = fmaxf(mx1, fmaxf(s[mt][j][2], s[mt][j][3]));
        }
        // The 4 threads of a quad share rows g and g+8.
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
        // Key k0 < len is always valid, so mx0/mx1 are finite here.
        const float alpha0 = exp2f(m[mt][0] - mx0);  // 0 on the first tile
        const float alpha1 = exp2f(m[mt][1] - mx1);
        m[mt][0] = mx0;
        m[mt][1] = mx1;
        float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
          s[mt][j][0] = exp2f(s[mt][j][0] - mx0);
          s[mt][j][1] = exp2f(s[mt][j][1] - mx0);
          s[mt][j][2] = exp2f(s[mt][j][2] - mx1);
          s[mt][j][3] = exp2f(s[mt][j][3] - mx1);
          rs0 += s[mt][j][0] + s[mt][j][1];
          rs1 += s[mt][j][2] + s[mt][j][3];
        }
        l[mt][0] = l[mt][0] * alpha0 + rs0;
        l[mt][1] = l[mt][1] * alpha1 + rs1;
#pragma unroll
        for (int j = 0; j < kD / 8; ++j) {
          o[mt][j][0] *= alpha0;
          o[mt][j][1] *= alpha0;
          o[mt][j][2] *= alpha1;
          o[mt][j][3] *= alpha1;
        }
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk) {
          pa[mt][kk][0] = Pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
          pa[mt][kk][1] = Pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
          pa[mt][kk][2] = Pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
          pa[mt][kk][3] = Pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
        }
      }

      // O += P·V. One ldmatrix.x4.trans gives the B fragments (b0, b1) of
      // key block kk for two adjacent 8-dim tiles j, j+1: matrix i covers
      // keys 16kk + 8(i & 1) .. +7 and dims 8(j + (i >> 1)) .. +7.
      const int mi = lane >> 3;
      const int key_in = (mi & 1) * 8 + (lane & 7);
      const int dim_in = (mi >> 1) * 8;
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
        for (int j = 0; j < kD / 8; j += 2) {
          uint32_t bv[4];
          LdMatrixX4Trans(&tiles.v[buf][kk * 16 + key_in][j * 8 + dim_in], bv);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            Mma<T>(o[mt][j], pa[mt][kk], bv[0], bv[1]);
            Mma<T>(o[mt][j + 1], pa[mt][kk], bv[2], bv[3]);
          }
        }
      }
    }
    __syncthreads();  // everyone is done with `buf` before it is refilled
  }
  if (!warp_active) return;

#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float l0 = l[mt][0], l1 = l[mt][1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = 1.f / l0;
    const float inv1 = 1.f / l1;
    const int r0 = qr + mt * 16 + g;
    const int r1 = r0 + 8;
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      const int col = j * 8 + 2 * c;
      if (r0 < len) {
        *reinterpret_cast<uint32_t*>(out + head_off + r0 * stride + col) =
            Pack2<T>(o[mt][j][0] * inv0, o[mt][j][1] * inv0);
      }
      if (r1 < len) {
        *reinterpret_cast<uint32_t*>(out + head_off + r1 * stride + col) =
            Pack2<T>(o[mt][j][2] * inv1, o[mt][j][3] * inv1);
      }
    }
  }
}

template <typename T>
cudaError_t Launch(const void* q, const void* k, const void* v, const int32_t* cu_seqlens,
                   int batch, int max_len, int heads, float scale_log2, void* out,
                   cudaStream_t stream) {
  const dim3 grid(CeilDiv(max_len, kBlockM), static_cast<unsigned int>(heads),
                  static_cast<unsigned int>(batch));
  FlashAttentionPipelinedKernel<T><<<grid, kThreads, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), cu_seqlens,
      heads, scale_log2, static_cast<T*>(out));
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchAttentionPipelined(const void* q, const void* k, const void* v,
                                     const int32_t* cu_seqlens, int batch, int max_len, int heads,
                                     float scale, void* out, DType dtype, cudaStream_t stream) {
  const float scale_log2 = scale * kLog2e;
  switch (dtype) {
    case DType::kBF16:
      return Launch<__nv_bfloat16>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out,
                                   stream);
    case DType::kF16:
      return Launch<__half>(q, k, v, cu_seqlens, batch, max_len, heads, scale_log2, out, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace neodb::encoder::cuda
