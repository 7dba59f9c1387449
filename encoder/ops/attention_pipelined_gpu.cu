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
#include "encoder/ops/attention_flash_gpu.cuh"

namespace neodb::encoder::cuda {
namespace {

using flash::kBlockN;
using flash::kD;
using flash::kLds;  // also conflict-free for ldmatrix
constexpr int kWarps = 4;
constexpr int kMTiles = 2;  // 16-row m-tiles per warp: 32 query rows
constexpr int kRowsPerWarp = 16 * kMTiles;
constexpr int kBlockM = kWarps * kRowsPerWarp;  // 128 queries per block
constexpr int kThreads = kWarps * 32;

template <typename T>
struct __align__(16) Tiles {
  T k[2][kBlockN][kLds];
  T v[2][kBlockN][kLds];
};

// Enqueues the copy of keys/values [k0, k0 + 64) into buffer `buf`; rows past
// the end of the sequence are zero-filled.
template <typename T>
__device__ __forceinline__ void LoadTile(Tiles<T>& t, int buf, const T* k, const T* v,
                                         const flash::SequenceHead& sh, int k0, int tid) {
#pragma unroll
  for (int i = tid; i < kBlockN * kD / 8; i += kThreads) {
    const int r = i / (kD / 8);
    const int col = (i % (kD / 8)) * 8;
    const bool valid = k0 + r < sh.len;
    // A valid address even when nothing is read.
    const int64_t off = sh.head_off + (valid ? k0 + r : 0) * sh.stride + col;
    CpAsync16(&t.k[buf][r][col], k + off, valid);
    CpAsync16(&t.v[buf][r][col], v + off, valid);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    FlashAttentionPipelinedKernel(const T* __restrict__ q, const T* __restrict__ k,
                                  const T* __restrict__ v, const int32_t* __restrict__ cu_seqlens,
                                  int heads, float scale_log2, T* __restrict__ out) {
  const flash::SequenceHead sh = flash::BlockSequenceHead(cu_seqlens, heads);
  const int len = sh.len;
  const int q0 = blockIdx.x * kBlockM;
  if (q0 >= len) return;  // grid is sized for the longest sequence

  __shared__ Tiles<T> tiles;

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;
  const int c = lane & 3;
  const int num_tiles = (len + kBlockN - 1) / kBlockN;

  // Start streaming tile 0 before touching Q.
  LoadTile(tiles, 0, k, v, sh, 0, tid);
  CpAsyncCommit();

  const int qr = q0 + warp * kRowsPerWarp;  // this warp's first query row
  const bool warp_active = qr < len;        // warp-uniform
  // Q fragments from global memory; rows past the end are zero (never stored).
  uint32_t qa[kMTiles][kD / 16][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    const int r0 = qr + mt * 16 + g;
    const int r1 = r0 + 8;
    const T* row0 = q + sh.head_off + static_cast<int64_t>(r0) * sh.stride;
    const T* row1 = q + sh.head_off + static_cast<int64_t>(r1) * sh.stride;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const int col = kk * 16 + 2 * c;
      qa[mt][kk][0] = r0 < len ? Ld32(row0 + col) : 0u;
      qa[mt][kk][1] = r1 < len ? Ld32(row1 + col) : 0u;
      qa[mt][kk][2] = r0 < len ? Ld32(row0 + col + 8) : 0u;
      qa[mt][kk][3] = r1 < len ? Ld32(row1 + col + 8) : 0u;
    }
  }

  flash::Accumulators<kMTiles> acc;
  acc.Zero();

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int buf = tile & 1;
    const int k0 = tile * kBlockN;
    // Prefetch the next tile into the other buffer (freed by the barrier at
    // the end of the previous iteration), then wait for this one.
    if (tile + 1 < num_tiles) {
      LoadTile(tiles, buf ^ 1, k, v, sh, k0 + kBlockN, tid);
      CpAsyncCommit();
      CpAsyncWait<1>();
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();

    if (warp_active) {
      float s[kMTiles][kBlockN / 8][4];
      flash::TileScores<T, kMTiles>(tiles.k[buf], qa, g, c, s);
      uint32_t pa[kMTiles][kBlockN / 16][4];
      flash::OnlineSoftmax<T, kMTiles>(s, k0, len, c, scale_log2, acc, pa);

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
            Mma<T>(acc.o[mt][j], pa[mt][kk], bv[0], bv[1]);
            Mma<T>(acc.o[mt][j + 1], pa[mt][kk], bv[2], bv[3]);
          }
        }
      }
    }
    __syncthreads();  // everyone is done with `buf` before it is refilled
  }
  if (warp_active) flash::StoreOutput<T, kMTiles>(acc, qr, g, c, sh, out);
}

}  // namespace

cudaError_t LaunchAttentionPipelined(const void* q, const void* k, const void* v,
                                     const int32_t* cu_seqlens, int batch, int max_len, int heads,
                                     float scale, void* out, DType dtype, cudaStream_t stream) {
  const float scale_log2 = scale * flash::kLog2e;
  switch (dtype) {
    case DType::kBF16:
      return flash::LaunchOverSequenceHeads(FlashAttentionPipelinedKernel<__nv_bfloat16>, kBlockM,
                                            kThreads, q, k, v, cu_seqlens, batch, max_len, heads,
                                            scale_log2, out, stream);
    case DType::kF16:
      return flash::LaunchOverSequenceHeads(FlashAttentionPipelinedKernel<__half>, kBlockM,
                                            kThreads, q, k, v, cu_seqlens, batch, max_len, heads,
                                            scale_log2, out, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace neodb::encoder::cuda
