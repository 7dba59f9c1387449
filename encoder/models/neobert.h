#pragma once
// The NeoBERT forward pass on the CPU (NEOBERT.md §3): F32, oneDNN SGEMM; or,
// with Precision kBf16/kInt8, the four projections per layer in BF16 or INT8
// (ops/low_precision_linear.h), the attention's two matmuls in BF16 where
// the host has AMX-BF16 (scores, softmax and the output F32), everything
// else F32.
//
// The layer sequence is the description's (models/neobert_layers.h); this
// backend supplies its op set (models/cpu_ops.h) and places the description's
// named intermediates in scratch buffers that grow to the largest batch seen
// and are reused across layers and calls; names whose lifetimes do not
// overlap share memory (qkv and u; q/k/v and g; a, o and f).
//
// Thread-safety: a backend instance is not thread-safe (its scratch is
// shared); Encoder serialises calls. num_threads is the calling thread's
// OpenMP thread count for oneDNN (ops::cpu::SetGemmThreads), set before each
// forward pass. Only the GEMMs use more than one thread;
// the elementwise ops and the softmax run on the calling thread (they are a
// few percent of the time at one thread; on the 2-vCPU build machine a second
// thread adds nothing).

#include <memory>
#include <vector>

#include "encoder/backend.h"
#include "encoder/models/cpu_ops.h"
#include "encoder/models/neobert_layers.h"
#include "encoder/ops/low_precision_linear.h"
#include "encoder/ops/qkv_rope.h"

namespace neodb::encoder {

class NeoBertCpuBackend final : public Backend {
 public:
  // REQUIRES: every weight CPU F32 with the shapes of NEOBERT.md §2 for
  // weights->config (CHECKed).
  // `precision` (BF16 or INT8 converts the projection and FFN weights here,
  // once) must be one the host runs: CpuPrecisionFor(precision) == precision
  // (CHECKed).
  NeoBertCpuBackend(std::shared_ptr<const NeoBertWeights> weights, int num_threads,
                    Precision precision = Precision::kF32);

  absl::StatusOr<Tensor> HiddenStates(const PackedBatch& batch) override;
  Device device() const override { return Device::kCpu; }
  Precision precision() const { return precision_; }
  // Bytes of the converted weights (0 for F32, which uses `weights` as is).
  int64_t converted_weight_bytes() const;

 private:
  void EnsureScratch(int64_t tokens);
  // Runs the layers and the final norm into `out` [N, C].
  void Forward(const PackedBatch& batch, Tensor* out);

  // A layer's matrices converted for BF16/INT8 (empty in F32).
  struct LowPrecisionLayer {
    ops::LowPrecisionLinear qkv, wo, w12, w3;
  };

  std::shared_ptr<const NeoBertWeights> weights_;
  int num_threads_;
  Precision precision_;
  std::vector<LowPrecisionLayer> low_;
  int64_t hidden_;    // C
  int64_t heads_;     // H
  int64_t head_dim_;  // D
  int64_t ffn_;       // F
  ops::RopeTable rope_;
  models::NeoBertParams<models::CpuOps::Weight> params_;  // weights_ and low_
  models::CpuOps ops_{{}};

  int64_t capacity_tokens_ = 0;  // N the buffers below are sized for
  Tensor x_;                     // [cap, C]  residual stream
  Tensor normed_;                // [cap, C]  a, then attention output o, then f
  Tensor wide_;                  // [cap, max(3C, 2F)]  y, then u
  Tensor heads_buf_;             // [cap · max(3C, F)]  q | k | v, then g
};

}  // namespace neodb::encoder
