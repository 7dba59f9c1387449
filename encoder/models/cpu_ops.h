#pragma once
// CpuOps: the op set (models/op_set.h) through which the CPU backends run a
// model description (neobert_layers.h, bert_layers.h). Each op calls an op
// front of encoder/ops (F32; the projections in BF16 or INT8 through
// ops::LowPrecisionLinear when the precision says so) on views of the
// backend's scratch buffers: a Value is the slot the description named, and
// Bind tells the op set which view each slot is for this batch. Ops the
// description marks in place (AddLinear, BiasGelu, AddPositions, a LayerNorm
// into its input's slot) write into their input's buffer, so the hot loop
// copies nothing.
//
// Thread-safety: not thread-safe (its scratch is shared); one call at a time,
// as its backend.

#include <cstdint>
#include <vector>

#include "encoder/backend.h"
#include "encoder/core/tensor.h"
#include "encoder/ops/low_precision_linear.h"
#include "encoder/ops/qkv_rope.h"

namespace neodb::encoder::models {

// An F32 view of `buffer`'s elements [offset, offset + numel(shape)).
inline Tensor ScratchView(Tensor& buffer, int64_t offset, Shape shape) {
  Tensor t = Tensor::Borrow(buffer.data<float>() + offset, std::move(shape), DType::kF32,
                            Device::kCpu, nullptr);
  NEODB_CHECK(offset + t.numel() <= buffer.numel());
  return t;
}

// Per-head views [heads, n, head_dim] of q, k and v, one after another in
// `buffer` (where ops::SplitQkv and ops::SplitQkvRope write them).
struct HeadViews {
  Tensor q, k, v;
};
inline HeadViews SplitHeadViews(Tensor& buffer, int64_t heads, int64_t n, int64_t head_dim) {
  const int64_t per_head = heads * n * head_dim;
  return {ScratchView(buffer, 0, {heads, n, head_dim}),
          ScratchView(buffer, per_head, {heads, n, head_dim}),
          ScratchView(buffer, 2 * per_head, {heads, n, head_dim})};
}

// The low-precision copies, made at load, of the projections `members`
// (pointers to weight tensors) of every layer, into LowLayer's members in
// that order; none in F32, where the op set runs SGEMM on the weights.
template <typename LowLayer, typename Layer, typename... Members>
std::vector<LowLayer> MakeLowPrecisionLayers(const std::vector<Layer>& layers,
                                             Precision precision, Members... members) {
  std::vector<LowLayer> low;
  if (precision == Precision::kF32) return low;
  for (const Layer& l : layers) {
    low.push_back({ops::LowPrecisionLinear::Make(l.*members, precision)...});
  }
  return low;
}

class CpuOps {
 public:
  using Value = int;  // a slot of the description
  using Heads = int;  // the slot of q, k, v (the views Bind gave)
  // A weight: the F32 tensor and, for a projection in BF16/INT8, its
  // converted copy (null in F32 and for norms, biases and tables). A null
  // tensor is a parameter folded into another at load (BERT's type row).
  struct Weight {
    const Tensor* t = nullptr;
    const ops::LowPrecisionLinear* low = nullptr;
  };

  struct Options {
    Precision precision = Precision::kF32;
    float eps = 0;           // of RmsNorm / LayerNorm
    int64_t heads = 0;       // H
    int64_t head_dim = 0;    // D
    const ops::RopeTable* rope = nullptr;  // QkvRope's (NeoBERT)
    // The attention's two matmuls in BF16 (ops::cpu::AttentionBf16; reduced
    // precisions on AMX hosts).
    bool attention_bf16 = false;
  };
  explicit CpuOps(Options options) : o_(options) {}

  // For the next forward pass over `batch` (borrowed until the next Bind):
  // views[s] is slot s's buffer, `heads` the q, k, v that QkvRope/SplitQkv
  // write and Attention reads. Grows the attention scratch to the batch.
  void Bind(const PackedBatch& batch, std::vector<Tensor> views, HeadViews heads);

  Value Input(int slot);  // CHECK-fails: inference starts from the ids
  Value Embedding(const Weight& table, int slot);
  Value AddPositions(Value x, const Weight& positions, const Weight& type);  // in place
  Value RmsNorm(Value x, const Weight& w, int slot);
  Value LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b, int slot);
  Value Linear(Value x, const Weight& w, int slot);
  Value AddLinear(Value x, Value in, const Weight& w);  // x += in · wᵀ, in place
  Heads QkvRope(Value y, int slot);
  Heads SplitQkv(Value y, const Weight& bias, int slot);
  Value Attention(Heads heads, int slot);
  Value SwiGlu(Value u, int slot);
  Value BiasGelu(Value u, const Weight& bias);  // in place
  Value EnterLayer(int64_t, Value x) { return x; }

 private:
  Tensor& view(Value v) { return views_[static_cast<size_t>(v)]; }
  void Project(Value in, const Weight& w, bool accumulate, Value out);

  Options o_;
  const PackedBatch* batch_ = nullptr;
  std::vector<Tensor> views_;
  HeadViews heads_;
  ops::LowPrecisionScratch low_scratch_;
  Tensor scores_;  // attention score block
  // The BF16 attention's q·scale | k | v and probabilities.
  ops::AlignedVector<uint16_t> heads_bf16_;
  ops::AlignedVector<uint16_t> probs_bf16_;
};

}  // namespace neodb::encoder::models
