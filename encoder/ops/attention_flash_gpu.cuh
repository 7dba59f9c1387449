#pragma once
// What the FlashAttention-2 kernels of attention_gpu.cu and
// attention_pipelined_gpu.cu share, written once so that their math is the
// same by construction: the tile sizes, the (sequence, head) a block works
// on, S = Q·Kᵀ for one K tile, the online softmax of one S tile (P packed for
// P·V), the final O / l and its store, and the launch over (query blocks,
// heads, sequences). They differ only in how K/V tiles reach shared memory.
// Fragment layouts: encoder/cuda/mma.cuh.
#include <cstdint>

#include "encoder/cuda/act_types.cuh"
#include "encoder/cuda/mma.cuh"

namespace neodb::encoder::cuda::flash {

inline constexpr int kD = 64;       // head dim
inline constexpr int kBlockN = 64;  // keys per tile
inline constexpr int kLds = kD + 8;  // padded smem row (elements): conflict-free fragment loads
inline constexpr float kLog2e = 1.4426950408889634f;

// The sequence (blockIdx.z) and head (blockIdx.y) of a block, in the packed
// [tokens, heads · kD] q, k, v and out.
struct SequenceHead {
  int len;           // the sequence's tokens
  int64_t stride;    // elements between tokens
  int64_t head_off;  // the head's slice of the sequence's first token
};

__device__ __forceinline__ SequenceHead BlockSequenceHead(const int32_t* cu_seqlens, int heads) {
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int seq_start = cu_seqlens[b];
  SequenceHead sh;
  sh.len = cu_seqlens[b + 1] - seq_start;
  sh.stride = static_cast<int64_t>(heads) * kD;
  sh.head_off = static_cast<int64_t>(seq_start) * sh.stride + h * kD;
  return sh;
}

// A warp's output accumulators (kMTiles m-tiles of 16 rows × kD), running row
// maxima (base-2 scaled) and its share of the running row sums, of rows g
// and g + 8 of each m-tile.
template <int kMTiles>
struct Accumulators {
  float o[kMTiles][kD / 8][4];
  float m[kMTiles][2];
  float l[kMTiles][2];

  __device__ __forceinline__ void Zero() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int j = 0; j < kD / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;
      m[mt][0] = m[mt][1] = -INFINITY;
      l[mt][0] = l[mt][1] = 0.f;
    }
  }
};

// S = Q·Kᵀ for a warp's rows × the kBlockN keys of `k_tile` (shared memory,
// row-major); each K fragment serves every m-tile.
template <typename T, int kMTiles>
__device__ __forceinline__ void TileScores(const T (*k_tile)[kLds],
                                           const uint32_t (&qa)[kMTiles][kD / 16][4], int g, int c,
                                           float (&s)[kMTiles][kBlockN / 8][4]) {
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
    }
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const uint32_t b0 = Ld32(&k_tile[j * 8 + g][kk * 16 + 2 * c]);
      const uint32_t b1 = Ld32(&k_tile[j * 8 + g][kk * 16 + 8 + 2 * c]);
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) Mma<T>(s[mt][j], qa[mt][kk], b0, b1);
    }
  }
}

// The online softmax of the tile of keys [k0, k0 + kBlockN): S scaled into
// base 2, keys at or past `len` masked, the running maxima and sums updated,
// O rescaled, and P packed into the A fragments pa of P·V.
template <typename T, int kMTiles>
__device__ __forceinline__ void OnlineSoftmax(float (&s)[kMTiles][kBlockN / 8][4], int k0, int len,
                                              int c, float scale_log2, Accumulators<kMTiles>& acc,
                                              uint32_t (&pa)[kMTiles][kBlockN / 16][4]) {
  const bool partial = k0 + kBlockN > len;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float mx0 = acc.m[mt][0], mx1 = acc.m[mt][1];
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
    const float alpha0 = exp2f(acc.m[mt][0] - mx0);  // exp2f(-inf) == 0 on the first tile
    const float alpha1 = exp2f(acc.m[mt][1] - mx1);
    acc.m[mt][0] = mx0;
    acc.m[mt][1] = mx1;
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
    acc.l[mt][0] = acc.l[mt][0] * alpha0 + rs0;
    acc.l[mt][1] = acc.l[mt][1] * alpha1 + rs1;
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      acc.o[mt][j][0] *= alpha0;
      acc.o[mt][j][1] *= alpha0;
      acc.o[mt][j][2] *= alpha1;
      acc.o[mt][j][3] *= alpha1;
    }
    // The S accumulators of key tiles 2kk, 2kk+1 are exactly the A fragment
    // of keys [16kk, 16kk+16) for P·V.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      pa[mt][kk][0] = Pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      pa[mt][kk][1] = Pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      pa[mt][kk][2] = Pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      pa[mt][kk][3] = Pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
  }
}

// out = O / l for a warp whose first query row is `row0` (rows row0 + 16mt
// + g and + 8 of each m-tile), rows past the end of the sequence not stored.
template <typename T, int kMTiles>
__device__ __forceinline__ void StoreOutput(const Accumulators<kMTiles>& acc, int row0, int g,
                                            int c, const SequenceHead& sh, T* out) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float l0 = acc.l[mt][0], l1 = acc.l[mt][1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = 1.f / l0;
    const float inv1 = 1.f / l1;
    const int r0 = row0 + mt * 16 + g;
    const int r1 = r0 + 8;
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      const int col = j * 8 + 2 * c;
      if (r0 < sh.len) {
        *reinterpret_cast<uint32_t*>(out + sh.head_off + r0 * sh.stride + col) =
            Pack2<T>(acc.o[mt][j][0] * inv0, acc.o[mt][j][1] * inv0);
      }
      if (r1 < sh.len) {
        *reinterpret_cast<uint32_t*>(out + sh.head_off + r1 * sh.stride + col) =
            Pack2<T>(acc.o[mt][j][2] * inv1, acc.o[mt][j][3] * inv1);
      }
    }
  }
}

// Launches `kernel` (block = `threads`) on a grid of (query blocks of
// `block_m`, heads, sequences): every attention kernel's grid, sized for the
// longest sequence.
template <typename T>
cudaError_t LaunchOverSequenceHeads(void (*kernel)(const T*, const T*, const T*, const int32_t*,
                                                   int, float, T*),
                                    int block_m, int threads, const void* q, const void* k,
                                    const void* v, const int32_t* cu_seqlens, int batch,
                                    int max_len, int heads, float scale_log2, void* out,
                                    cudaStream_t stream) {
  const dim3 grid(CeilDiv(max_len, block_m), static_cast<unsigned int>(heads),
                  static_cast<unsigned int>(batch));
  kernel<<<grid, threads, 0, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
                                       static_cast<const T*>(v), cu_seqlens, heads, scale_log2,
                                       static_cast<T*>(out));
  return cudaGetLastError();
}

}  // namespace neodb::encoder::cuda::flash
