#include "encoder/models/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "encoder/models/op_set.h"
#include "encoder/ops/attention.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/embedding.h"
#include "encoder/ops/gelu.h"
#include "encoder/ops/layer_norm.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/parallel_cpu.h"
#include "encoder/ops/position_embedding.h"
#include "encoder/ops/rms_norm.h"
#include "encoder/ops/split_qkv.h"
#include "encoder/ops/swiglu.h"

namespace neodb::encoder::models {

static_assert(OpSet<CpuOps>);

void CpuOps::Bind(const PackedBatch& batch, std::vector<Tensor> views, HeadViews heads) {
  batch_ = &batch;
  views_ = std::move(views);
  heads_ = std::move(heads);
  // One attention slice per GEMM thread: the heads run in parallel
  // (ops::Attention).
  const int64_t need =
      ops::AttentionScratchSize(batch.longest()) * ops::cpu::MaxParallelWorkers();
  if (!scores_.defined() || scores_.numel() < need) scores_ = Tensor::Empty({need}, DType::kF32);
  if (o_.attention_bf16) {
    const size_t qkv = static_cast<size_t>(3 * heads_.q.numel());
    if (heads_bf16_.size() < qkv) heads_bf16_.resize(qkv);
    if (probs_bf16_.size() < static_cast<size_t>(need)) probs_bf16_.resize(need);
  }
}

// out (+)= in · wᵀ: SGEMM in F32, else through w.low (converted at load).
void CpuOps::Project(Value in, const Weight& w, bool accumulate, Value out) {
  const Tensor& x = view(in);
  Tensor* y = &view(out);
  if (o_.precision == Precision::kF32) return ops::Linear(x, *w.t, accumulate, y);
  NEODB_CHECK(w.low != nullptr && x.dim(1) == w.low->in_features() &&
              y->dim(1) == w.low->out_features());
  w.low->Apply(x.data<float>(), x.dim(0), accumulate, y->data<float>(), &low_scratch_);
}

CpuOps::Value CpuOps::Input(int slot) {
  NEODB_CHECK(false);  // inference runs from the ids (first_layer 0)
  return slot;
}

CpuOps::Value CpuOps::Embedding(const Weight& table, int slot) {
  ops::Embedding(*table.t, batch_->ids, &view(slot));
  return slot;
}

CpuOps::Value CpuOps::AddPositions(Value x, const Weight& positions, const Weight& type) {
  NEODB_CHECK(type.t == nullptr);  // the loader folded type row 0 into the positions
  ops::AddPositionEmbedding(*positions.t, batch_->offsets, &view(x));
  return x;
}

CpuOps::Value CpuOps::RmsNorm(Value x, const Weight& w, int slot) {
  ops::RmsNorm(view(x), *w.t, o_.eps, &view(slot));
  return slot;
}

CpuOps::Value CpuOps::LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b,
                                int slot) {
  ops::LayerNorm(view(x), bias != nullptr ? bias->t : nullptr, *w.t, *b.t, o_.eps, &view(slot));
  return slot;
}

CpuOps::Value CpuOps::Linear(Value x, const Weight& w, int slot) {
  Project(x, w, /*accumulate=*/false, slot);
  return slot;
}

CpuOps::Value CpuOps::AddLinear(Value x, Value in, const Weight& w) {
  Project(in, w, /*accumulate=*/true, x);
  return x;
}

CpuOps::Heads CpuOps::QkvRope(Value y, int slot) {
  ops::SplitQkvRope(view(y), batch_->offsets, o_.heads, *o_.rope, &heads_.q, &heads_.k,
                    &heads_.v);
  return slot;
}

CpuOps::Heads CpuOps::SplitQkv(Value y, const Weight& bias, int slot) {
  ops::SplitQkv(view(y), *bias.t, o_.heads, &heads_.q, &heads_.k, &heads_.v);
  return slot;
}

CpuOps::Value CpuOps::Attention(Heads, int slot) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(o_.head_dim));
  Tensor* out = &view(slot);
  if (!o_.attention_bf16) {
    ops::Attention(heads_.q, heads_.k, heads_.v, batch_->offsets, scale, &scores_, out);
    return slot;
  }
  // q · scale first (the scale is folded before rounding), then q | k | v to
  // BF16 in one pass (they lie one after another).
  const int64_t per_head = heads_.q.numel();
  float* qf = heads_.q.data<float>();
  for (int64_t i = 0; i < per_head; ++i) qf[i] *= scale;
  ops::ConvertToBf16(qf, 3 * per_head, heads_bf16_.data());
  const uint16_t* qb = heads_bf16_.data();
  ops::cpu::AttentionBf16(qb, qb + per_head, qb + 2 * per_head, batch_->offsets.data(),
                          batch_->batch_size(), o_.heads, o_.head_dim, scores_.data<float>(),
                          probs_bf16_.data(),
                          std::min<int64_t>(scores_.numel(), probs_bf16_.size()),
                          out->data<float>());
  return slot;
}

CpuOps::Value CpuOps::SwiGlu(Value u, int slot) {
  ops::SwiGlu(view(u), &view(slot));
  return slot;
}

CpuOps::Value CpuOps::BiasGelu(Value u, const Weight& bias) {
  ops::BiasGelu(*bias.t, &view(u));
  return u;
}

}  // namespace neodb::encoder::models
