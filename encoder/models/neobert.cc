#include "encoder/models/neobert.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "encoder/models/description_helpers.h"
#include "encoder/ops/attention.h"
#include "encoder/ops/low_precision_linear.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/embedding.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/pooling.h"
#include "encoder/ops/rms_norm.h"
#include "encoder/ops/swiglu.h"

namespace neodb::encoder {
namespace {

using models::Project;
using models::MakeLowPrecisionLayers;
using models::ScratchView;
using models::SplitHeadViews;

void CheckWeight(const Tensor& t, const Shape& shape) {
  NEODB_CHECK(t.device() == Device::kCpu && t.dtype() == DType::kF32 && t.shape() == shape);
}

}  // namespace

NeoBertCpuBackend::NeoBertCpuBackend(std::shared_ptr<const NeoBertWeights> weights, int num_threads,
                                     Precision precision)
    : weights_(std::move(weights)), num_threads_(std::max(1, num_threads)), precision_(precision) {
  NEODB_CHECK(CpuPrecisionFor(precision_, nullptr) == precision_);
  const NeoBertConfig& cfg = weights_->config;
  hidden_ = cfg.hidden_size;
  heads_ = cfg.num_attention_heads;
  NEODB_CHECK(hidden_ > 0 && heads_ > 0 && hidden_ % heads_ == 0);
  head_dim_ = hidden_ / heads_;
  NEODB_CHECK(head_dim_ % 2 == 0);
  NEODB_CHECK(static_cast<int64_t>(weights_->layers.size()) == cfg.num_hidden_layers);
  ffn_ = cfg.ffn_dim();
  eps_ = static_cast<float>(cfg.norm_eps);
  CheckWeight(weights_->embeddings, {cfg.vocab_size, hidden_});
  CheckWeight(weights_->final_norm, {hidden_});
  for (const LayerWeights& l : weights_->layers) {
    CheckWeight(l.attention_norm, {hidden_});
    CheckWeight(l.qkv, {3 * hidden_, hidden_});
    CheckWeight(l.wo, {hidden_, hidden_});
    CheckWeight(l.ffn_norm, {hidden_});
    CheckWeight(l.w12, {2 * ffn_, hidden_});
    CheckWeight(l.w3, {hidden_, ffn_});
  }
  // BF16 attention only on AMX: without it BF16 matmuls were slower than
  // SGEMM (cpu_kernels.h).
  attention_bf16_ = precision_ != Precision::kF32 && CpuRunsAmxBf16();
  low_ = MakeLowPrecisionLayers<LowPrecisionLayer>(weights_->layers, precision_, &LayerWeights::qkv,
                                                   &LayerWeights::wo, &LayerWeights::w12,
                                                   &LayerWeights::w3);
  rope_ = ops::MakeRopeTable(std::max<int64_t>(cfg.max_length, 1), head_dim_, cfg.rope_theta);
}


void NeoBertCpuBackend::EnsureScratch(int64_t tokens, int64_t longest) {
  const int64_t wide_cols = std::max(3 * hidden_, 2 * ffn_);
  if (tokens > capacity_tokens_) {
    capacity_tokens_ = tokens;
    x_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
    normed_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
    wide_ = Tensor::Empty({tokens, wide_cols}, DType::kF32);
    heads_buf_ = Tensor::Empty({tokens * std::max(3 * hidden_, ffn_)}, DType::kF32);
  }
  const int64_t need = ops::AttentionScratchSize(longest);
  if (!scores_.defined() || scores_.numel() < need) {
    scores_ = Tensor::Empty({need}, DType::kF32);
  }
  if (attention_bf16_) {
    const size_t heads = static_cast<size_t>(3 * tokens * hidden_);
    if (heads_bf16_.size() < heads) heads_bf16_.resize(heads);
    if (probs_bf16_.size() < static_cast<size_t>(need)) probs_bf16_.resize(need);
  }
}

int64_t NeoBertCpuBackend::converted_weight_bytes() const {
  int64_t bytes = 0;
  for (const LowPrecisionLayer& l : low_) {
    bytes += l.qkv.bytes() + l.wo.bytes() + l.w12.bytes() + l.w3.bytes();
  }
  return bytes;
}


void NeoBertCpuBackend::Forward(const PackedBatch& batch, Tensor* out) {
  ops::cpu::SetGemmThreads(num_threads_);
  const int64_t n = batch.total_tokens();
  EnsureScratch(n, batch.longest());
  const int64_t c = hidden_;
  const int64_t per_head = heads_ * n * head_dim_;
  Tensor x = ScratchView(x_, 0, {n, c});
  Tensor normed = ScratchView(normed_, 0, {n, c});
  Tensor qkv = ScratchView(wide_, 0, {n, 3 * c});
  Tensor u = ScratchView(wide_, 0, {n, 2 * ffn_});
  auto [q, k, v] = SplitHeadViews(heads_buf_, heads_, n, head_dim_);
  Tensor g = ScratchView(heads_buf_, 0, {n, ffn_});
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));

  ops::Embedding(weights_->embeddings, batch.ids, &x);
  static const LowPrecisionLayer kNone;
  for (size_t i = 0; i < weights_->layers.size(); ++i) {
    const LayerWeights& layer = weights_->layers[i];
    const LowPrecisionLayer& low = low_.empty() ? kNone : low_[i];
    ops::RmsNorm(x, layer.attention_norm, eps_, &normed);
    Project(precision_, normed, layer.qkv, low.qkv, /*accumulate=*/false, &qkv, &low_scratch_);
    ops::SplitQkvRope(qkv, batch.offsets, heads_, rope_, &q, &k, &v);
    if (attention_bf16_) {
      // q · scale first (the scale is folded before rounding), then q | k | v
      // to BF16 in one pass.
      float* qf = q.data<float>();
      for (int64_t i = 0; i < per_head; ++i) qf[i] *= scale;
      ops::ConvertToBf16(qf, 3 * per_head, heads_bf16_.data());
      const uint16_t* qb = heads_bf16_.data();
      ops::cpu::AttentionBf16(qb, qb + per_head, qb + 2 * per_head, batch.offsets.data(),
                              batch.batch_size(), heads_, head_dim_, scores_.data<float>(),
                              probs_bf16_.data(), normed.data<float>());
    } else {
      ops::Attention(q, k, v, batch.offsets, scale, &scores_, &normed);
    }
    Project(precision_, normed, layer.wo, low.wo, /*accumulate=*/true, &x, &low_scratch_);
    ops::RmsNorm(x, layer.ffn_norm, eps_, &normed);
    Project(precision_, normed, layer.w12, low.w12, /*accumulate=*/false, &u, &low_scratch_);
    ops::SwiGlu(u, &g);
    Project(precision_, g, layer.w3, low.w3, /*accumulate=*/true, &x, &low_scratch_);
  }
  ops::RmsNorm(x, weights_->final_norm, eps_, out);
}

absl::StatusOr<Tensor> NeoBertCpuBackend::HiddenStates(const PackedBatch& batch) {
  const NeoBertConfig& cfg = weights_->config;
  RETURN_IF_ERROR(ValidatePackedBatch(batch, cfg.max_length, cfg.vocab_size, "max_length"));
  Tensor out = Tensor::Empty({batch.total_tokens(), hidden_}, DType::kF32);
  if (batch.total_tokens() > 0) Forward(batch, &out);
  return out;
}


std::unique_ptr<Backend> MakeCpuBackend(std::shared_ptr<const NeoBertWeights> weights,
                                        int num_threads, Precision precision) {
  return std::make_unique<NeoBertCpuBackend>(std::move(weights), num_threads, precision);
}

}  // namespace neodb::encoder
