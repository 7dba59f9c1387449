#include "encoder/models/bert.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "encoder/models/description_helpers.h"
#include "encoder/ops/attention.h"
#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/embedding.h"
#include "encoder/ops/gelu.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/layer_norm.h"
#include "encoder/ops/linear.h"
#include "encoder/ops/pooling.h"
#include "encoder/ops/position_embedding.h"
#include "encoder/ops/split_qkv.h"

namespace neodb::encoder {
using models::Project;
using models::MakeLowPrecisionLayers;
using models::ScratchView;
using models::SplitHeadViews;

BertCpuBackend::BertCpuBackend(std::shared_ptr<const BertWeights> weights, int num_threads,
                               Precision precision)
    : weights_(std::move(weights)), num_threads_(std::max(1, num_threads)), precision_(precision) {
  NEODB_CHECK(CpuPrecisionFor(precision_, nullptr) == precision_);
  const BertConfig& cfg = weights_->config;
  NEODB_CHECK(cfg.Validate().ok());
  NEODB_CHECK(static_cast<int64_t>(weights_->layers.size()) == cfg.num_hidden_layers);
  hidden_ = cfg.hidden_size;
  heads_ = cfg.num_attention_heads;
  head_dim_ = cfg.head_dim();
  ffn_ = cfg.intermediate_size;
  eps_ = static_cast<float>(cfg.layer_norm_eps);
  low_ = MakeLowPrecisionLayers<LowPrecisionLayer>(
      weights_->layers, precision_, &BertLayerWeights::qkv, &BertLayerWeights::wo,
      &BertLayerWeights::w1, &BertLayerWeights::w2);
}


void BertCpuBackend::EnsureScratch(int64_t tokens, int64_t longest) {
  if (tokens > capacity_tokens_) {
    capacity_tokens_ = tokens;
    attn_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
    wide_ = Tensor::Empty({tokens, std::max(3 * hidden_, ffn_)}, DType::kF32);
    qkv_heads_ = Tensor::Empty({3 * tokens * hidden_}, DType::kF32);
  }
  const int64_t need = ops::AttentionScratchSize(longest);
  if (!scores_.defined() || scores_.numel() < need) scores_ = Tensor::Empty({need}, DType::kF32);
}


void BertCpuBackend::Forward(const PackedBatch& batch, Tensor* x) {
  ops::cpu::SetGemmThreads(num_threads_);
  const int64_t n = batch.total_tokens();
  EnsureScratch(n, batch.longest());
  const int64_t c = hidden_;
  Tensor o = ScratchView(attn_, 0, {n, c});
  Tensor y = ScratchView(wide_, 0, {n, 3 * c});
  Tensor u = ScratchView(wide_, 0, {n, ffn_});
  auto [q, k, v] = SplitHeadViews(qkv_heads_, heads_, n, head_dim_);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  const BertWeights& w = *weights_;

  ops::Embedding(w.word_embeddings, batch.ids, x);
  ops::AddPositionEmbedding(w.position_embeddings, batch.offsets, x);
  ops::LayerNorm(*x, nullptr, w.embedding_norm_weight, w.embedding_norm_bias, eps_, x);
  static const LowPrecisionLayer kNone;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const BertLayerWeights& l = w.layers[i];
    const LowPrecisionLayer& low = low_.empty() ? kNone : low_[i];
    Project(precision_, *x, l.qkv, low.qkv, /*accumulate=*/false, &y, &low_scratch_);
    ops::SplitQkv(y, l.qkv_bias, heads_, &q, &k, &v);
    ops::Attention(q, k, v, batch.offsets, scale, &scores_, &o);
    Project(precision_, o, l.wo, low.wo, /*accumulate=*/true, x, &low_scratch_);
    ops::LayerNorm(*x, &l.wo_bias, l.attention_norm_weight, l.attention_norm_bias, eps_, x);
    Project(precision_, *x, l.w1, low.w1, /*accumulate=*/false, &u, &low_scratch_);
    ops::BiasGelu(l.w1_bias, &u);
    Project(precision_, u, l.w2, low.w2, /*accumulate=*/true, x, &low_scratch_);
    ops::LayerNorm(*x, &l.w2_bias, l.ffn_norm_weight, l.ffn_norm_bias, eps_, x);
  }
}

absl::StatusOr<Tensor> BertCpuBackend::HiddenStates(const PackedBatch& batch) {
  const BertConfig& cfg = weights_->config;
  RETURN_IF_ERROR(ValidatePackedBatch(batch, cfg.max_position_embeddings, cfg.vocab_size,
                                      "max_position_embeddings"));
  Tensor out = Tensor::Empty({batch.total_tokens(), hidden_}, DType::kF32);
  if (batch.total_tokens() > 0) Forward(batch, &out);
  return out;
}


}  // namespace neodb::encoder
