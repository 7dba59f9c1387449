#include "encoder/models/bert.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"

namespace neodb::encoder {
using models::CpuOps;
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
  low_ = MakeLowPrecisionLayers<LowPrecisionLayer>(
      weights_->layers, precision_, &BertLayerWeights::qkv, &BertLayerWeights::wo,
      &BertLayerWeights::w1, &BertLayerWeights::w2);
  // The description's weights: the tensors, with their converted copies. The
  // type embedding has none: the loader folded its row 0 into the positions.
  const BertWeights& w = *weights_;
  params_.word_embeddings = {&w.word_embeddings};
  params_.position_embeddings = {&w.position_embeddings};
  params_.embedding_norm_weight = {&w.embedding_norm_weight};
  params_.embedding_norm_bias = {&w.embedding_norm_bias};
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const BertLayerWeights& l = w.layers[i];
    const LowPrecisionLayer* low = low_.empty() ? nullptr : &low_[i];
    params_.layers.push_back({{&l.qkv, low != nullptr ? &low->qkv : nullptr},
                              {&l.qkv_bias},
                              {&l.wo, low != nullptr ? &low->wo : nullptr},
                              {&l.wo_bias},
                              {&l.attention_norm_weight},
                              {&l.attention_norm_bias},
                              {&l.w1, low != nullptr ? &low->w1 : nullptr},
                              {&l.w1_bias},
                              {&l.w2, low != nullptr ? &low->w2 : nullptr},
                              {&l.w2_bias},
                              {&l.ffn_norm_weight},
                              {&l.ffn_norm_bias}});
  }
  CpuOps::Options o;
  o.precision = precision_;
  o.eps = static_cast<float>(cfg.layer_norm_eps);
  o.heads = heads_;
  o.head_dim = head_dim_;
  ops_ = CpuOps(o);
}


void BertCpuBackend::EnsureScratch(int64_t tokens) {
  if (tokens <= capacity_tokens_) return;
  capacity_tokens_ = tokens;
  attn_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
  wide_ = Tensor::Empty({tokens, std::max(3 * hidden_, ffn_)}, DType::kF32);
  qkv_heads_ = Tensor::Empty({3 * tokens * hidden_}, DType::kF32);
}


void BertCpuBackend::Forward(const PackedBatch& batch, Tensor* x) {
  ops::cpu::SetGemmThreads(num_threads_);
  const int64_t n = batch.total_tokens();
  EnsureScratch(n);
  const int64_t c = hidden_;
  using namespace models::bert;
  std::vector<Tensor> views(kSlots);
  views[kX] = ScratchView(*x, 0, {n, c});
  views[kO] = ScratchView(attn_, 0, {n, c});
  views[kY] = ScratchView(wide_, 0, {n, 3 * c});
  views[kU] = ScratchView(wide_, 0, {n, ffn_});
  ops_.Bind(batch, std::move(views), SplitHeadViews(qkv_heads_, heads_, n, head_dim_));
  models::BertHidden(ops_, params_, /*first_layer=*/0);
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
