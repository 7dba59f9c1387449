#pragma once
// The BERT forward pass on the CPU (Hugging Face BertModel, one segment, no
// padding): the description (models/bert_layers.h) run through the CPU op set
// (models/cpu_ops.h). F32 by default; with Precision kBf16/kInt8 the four
// matmuls per layer run through ops::LowPrecisionLinear, as NeoBERT's do; the
// attention, norms, GELU and residual stream stay F32. The residual stream is
// the output tensor itself; the attention output, the projections (y, then
// u) and q | k | v have a scratch buffer each.
//
// Thread-safety: as NeoBertCpuBackend (one call at a time; Encoder
// serialises).

#include <memory>

#include "encoder/backend.h"
#include "encoder/checkpoint/bert_weights.h"
#include "encoder/models/bert_layers.h"
#include "encoder/models/cpu_ops.h"
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
  void EnsureScratch(int64_t tokens);
  void Forward(const PackedBatch& batch, Tensor* out);

  struct LowPrecisionLayer {
    ops::LowPrecisionLinear qkv, wo, w1, w2;
  };

  std::shared_ptr<const BertWeights> weights_;
  int num_threads_;
  Precision precision_;
  std::vector<LowPrecisionLayer> low_;
  int64_t hidden_, heads_, head_dim_, ffn_;
  models::BertParams<models::CpuOps::Weight> params_;  // weights_ and low_
  models::CpuOps ops_{{}};

  int64_t capacity_tokens_ = 0;
  Tensor attn_;       // [cap, C]      attention output o
  Tensor wide_;       // [cap, max(3C, I)]  y, then u
  Tensor qkv_heads_;  // [3 · cap · C] q | k | v
};

}  // namespace neodb::encoder
