#pragma once
// The CUDA bodies of the encoder ops (encoder/ops/*_gpu.cu), as plain
// pointer + stream launchers. Every launcher enqueues work on `stream` and
// returns the launch status (cudaGetLastError); callers wrap it in
// CUDA_RETURN_IF_ERROR. No launcher allocates or synchronises.
//
// Activation element types: `dtype` is DType::kF32, kF16 or kBF16 (the
// backend's compute type); a `void*` argument documented as "act" holds that
// type. Everything documented as float is F32 whatever the compute type: the
// residual stream, the norm weights and every reduction stay in F32.
//
// Packed batches: sequence b holds tokens [cu_seqlens[b], cu_seqlens[b+1]) of
// the token-major buffers; cu_seqlens has batch+1 entries, cu_seqlens[0] = 0.
// Nothing is computed for padding because there is none.

#include <cuda_runtime.h>

#include <cstdint>

#include "encoder/core/dtype.h"

namespace neodb::encoder::cuda {

// cudaSuccess when this binary has a kernel image the current device can run
// (cudaErrorNoKernelImageForDevice otherwise).
cudaError_t CheckKernelImage();

// out[t, :] = table[ids[t], :] (F32). REQUIRES: every id in [0, vocab).
cudaError_t LaunchEmbeddingGather(const float* table, const int32_t* ids, int64_t tokens,
                                  int hidden, float* out, cudaStream_t stream);

// out[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) * w, computed in F32 and
// written as `out_dtype` (F32, F16 or BF16).
cudaError_t LaunchRmsNorm(const float* x, const float* w, int64_t rows, int cols, float eps,
                          void* out, DType out_dtype, cudaStream_t stream);

// Splits the fused, head-interleaved QKV projection qkv [tokens, 3·heads·64]
// (act; head h holds q, k, v at columns 192h, 192h+64, 192h+128) into q, k, v
// [tokens, heads, 64] (act) and applies RoPE to q and k: adjacent pairs
// (2i, 2i+1) rotated by angle positions[t] · theta^(-2i/64), computed in F32
// as positions times inverse frequencies.
cudaError_t LaunchQkvRope(const void* qkv, const int32_t* positions, int64_t tokens, int heads,
                          float theta, void* q, void* k, void* v, DType dtype, cudaStream_t stream);

// Which attention kernel runs (all compute the same function).
enum class AttentionKernel : uint8_t {
  kPipelined,  // default: 128 queries/block, tensor cores, K/V tiles double-
               // buffered with cp.async, V read by ldmatrix.trans (F16/BF16)
  kTiled128,   // 128 queries/block, tensor cores, synchronous tile loads
  kTiled64,    // 64 queries/block, tensor cores, synchronous tile loads
  kScalar,     // scalar F32 math, any dtype: slow; fallback and cross-check
};

// Bidirectional softmax(q·kᵀ·scale)·v per sequence and head over a packed
// batch; q, k, v, out are [tokens, heads, 64] (act). FlashAttention-style:
// tiles of queries × 64 keys, online softmax in F32, no [T, T] matrix in
// device memory; tensor-core kernels use mma.sync m16n8k16 with F32
// accumulation. F32 always runs the scalar kernel. `max_len` bounds every
// sequence length. REQUIRES: head_dim 64 (cudaErrorInvalidValue otherwise).
cudaError_t LaunchAttention(const void* q, const void* k, const void* v, const int32_t* cu_seqlens,
                            int batch, int max_len, int heads, int head_dim, float scale, void* out,
                            DType dtype, cudaStream_t stream,
                            AttentionKernel kernel = AttentionKernel::kPipelined);

// The kPipelined body (attention_pipelined_gpu.cu); F16/BF16 only. Called by
// LaunchAttention, which checks the arguments.
cudaError_t LaunchAttentionPipelined(const void* q, const void* k, const void* v,
                                     const int32_t* cu_seqlens, int batch, int max_len, int heads,
                                     float scale, void* out, DType dtype, cudaStream_t stream);

// out[r, j] = SiLU(u[r, j]) · u[r, f + j] for u [rows, 2f] (act), out [rows, f]
// (act); the FIRST half is gated. Math in F32.
cudaError_t LaunchSwiGlu(const void* u, int64_t rows, int f, void* out, DType dtype,
                         cudaStream_t stream);

// out[b, :] = hidden[cu_seqlens[b], :] (CLS) or the mean of hidden over the
// rows of sequence b (mean), all F32. REQUIRES: every sequence non-empty.
cudaError_t LaunchPool(const float* hidden, const int32_t* cu_seqlens, int batch, int cols,
                       bool mean, float* out, cudaStream_t stream);

}  // namespace neodb::encoder::cuda
