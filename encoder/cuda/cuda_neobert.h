#pragma once
// CudaNeoBert: the NeoBERT forward pass (NEOBERT.md §3) on one GPU over a
// packed batch, written step by step like the math. Activations live in
// buffers that grow to the largest batch seen and are reused.
//
// Thread-safety: not thread-safe (one forward pass at a time). Borrows the
// context and the weights, which must outlive it.

#include <cstdint>
#include <vector>

#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/cuda/cuda_context.h"
#include "encoder/cuda/cuda_weights.h"
#include "encoder/cuda/device_buffer.h"
#include "encoder/cuda/gemm.h"
#include "encoder/cuda/kernels.h"

namespace neodb::encoder::cuda {

class CudaNeoBert {
 public:
  CudaNeoBert(const CudaContext* ctx, const CudaWeights* weights);

  // Checks `batch` against the model: INVALID_ARGUMENT for malformed offsets,
  // an empty or over-long sequence, an id outside the vocabulary.
  absl::Status Validate(const PackedBatch& batch) const;

  // Enqueues the forward pass; afterwards hidden() holds last_hidden_state
  // (F32 [total_tokens, C], after the final RMSNorm). REQUIRES: Validate ok.
  absl::Status Forward(const PackedBatch& batch);
  // Enqueues pooling of the last Forward's hidden states into pooled()
  // (F32 [batch, C]).
  absl::Status Pool(Pooling pooling);

  // Tests: grows the buffers for `tokens`/`batch` and fills every activation
  // and output buffer with 0xFF bytes (NaN in F32/F16/BF16), so that a kernel
  // that skips an element shows up as NaN instead of a stale right answer.
  absl::Status PoisonForTesting(int64_t tokens, int64_t batch);

  // Runs the QKV projection + RoPE and the whole FFN block in slices of at
  // most `tokens` tokens (0, the default: the whole pass at once). Slices
  // keep the wide intermediates ([n, 3C], [n, 2F], [n, F]) small enough to
  // stay in L2 between the GEMM and the kernel that consumes them, and bound
  // their memory. Whether it pays is a measurement (bench --chunk).
  void set_chunk_tokens(int64_t tokens) { chunk_tokens_ = tokens; }
  // The attention kernel variant (kernels.h); default kPipelined.
  void set_attention_kernel(AttentionKernel kernel) { attention_kernel_ = kernel; }

  const float* hidden() const { return final_.as<float>(); }
  const float* pooled() const { return pooled_.as<float>(); }
  int64_t tokens() const { return tokens_; }
  int64_t batch() const { return batch_; }

 private:
  absl::Status Reserve(int64_t tokens, int64_t batch);
  // One pre-norm transformer block over the residual stream.
  absl::Status Layer(const CudaLayerWeights& w);

  const CudaContext* ctx_;
  const CudaWeights* w_;
  Gemm gemm_;

  int64_t chunk_tokens_ = 0;
  AttentionKernel attention_kernel_ = AttentionKernel::kPipelined;
  int64_t tokens_ = 0;
  int64_t batch_ = 0;
  int max_len_ = 0;
  // Host staging of the batch description (kept until the next Forward so
  // that asynchronous copies never read freed memory).
  std::vector<int32_t> h_positions_;
  std::vector<int32_t> h_cu_seqlens_;

  DeviceBuffer ids_;         // I32 [T]
  DeviceBuffer positions_;   // I32 [T], restarting at 0 per sequence
  DeviceBuffer cu_seqlens_;  // I32 [B+1]
  DeviceBuffer residual_;    // F32 [T, C]
  DeviceBuffer normed_;      // act [T, C]
  DeviceBuffer qkv_;         // act [chunk, 3C]
  DeviceBuffer q_, k_, v_;   // act [T, H, D]
  DeviceBuffer attn_;        // act [T, C]
  DeviceBuffer ffn_in_;      // act [chunk, 2F]
  DeviceBuffer ffn_act_;     // act [chunk, F]
  DeviceBuffer final_;       // F32 [T, C]
  DeviceBuffer pooled_;      // F32 [B, C]
};

}  // namespace neodb::encoder::cuda
