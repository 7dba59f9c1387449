#pragma once
// The BERT forward pass on the CPU (Hugging Face BertModel, one segment, no
// padding): the architecture's description, written over the op fronts of
// encoder/ops. F32 by default; with Precision kBf16/kInt8 the four matmuls
// per layer run through ops::LowPrecisionLinear, as NeoBERT's do; the
// attention, norms, GELU and residual stream stay F32.
//
// Over a packed batch of N tokens (sequences end to end):
//   x = LayerNorm(word[ids] + (position[t] + type[0]))        [N, C]
//   per layer (post-norm):
//     y   = x · qkvᵀ                                           [N, 3C]
//     q,k,v = SplitQkv(y, qkv_bias)                            [H, N, D] each
//     o   = Attention(q, k, v) per sequence, scale 1/√D        [N, C]
//     x  += o · woᵀ ;  x = LayerNorm(x + wo_bias)               (bias in the norm's pass)
//     u   = GELU(x · w1ᵀ + w1_bias)                             [N, I]
//     x  += u · w2ᵀ ;  x = LayerNorm(x + w2_bias)
//   last_hidden_state = x
//
// Thread-safety: as NeoBertCpuBackend (one call at a time; Encoder
// serialises).

#include <memory>

#include "encoder/backend.h"
#include "encoder/checkpoint/bert_weights.h"
#include "encoder/ops/low_precision_linear.h"

namespace neodb::encoder {

class BertCpuBackend final : public Backend {
 public:
  // REQUIRES: weights as LoadBertCheckpoint returns them (CPU F32, shapes
  // checked); CpuPrecisionFor(precision) == precision (CHECKed).
  BertCpuBackend(std::shared_ptr<const BertWeights> weights, int num_threads,
                 Precision precision = Precision::kF32);

  absl::StatusOr<Tensor> HiddenStates(const PackedBatch& batch) override;
  Device device() const override { return Device::kCpu; }

 private:
  void EnsureScratch(int64_t tokens, int64_t longest);
  void Forward(const PackedBatch& batch, Tensor* out);

  struct LowPrecisionLayer {
    ops::LowPrecisionLinear qkv, wo, w1, w2;
  };

  std::shared_ptr<const BertWeights> weights_;
  int num_threads_;
  Precision precision_;
  std::vector<LowPrecisionLayer> low_;
  ops::LowPrecisionScratch low_scratch_;
  int64_t hidden_, heads_, head_dim_, ffn_;
  float eps_;

  int64_t capacity_tokens_ = 0;
  Tensor attn_;   // [cap, C]      attention output o
  Tensor wide_;   // [cap, max(3C, I)]  y, then u
  Tensor qkv_heads_;  // [3 · cap · C] q | k | v
  Tensor scores_;
};

}  // namespace neodb::encoder
