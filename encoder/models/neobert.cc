#include "encoder/models/neobert.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "encoder/ops/cpu_kernels.h"
#include "encoder/ops/gemm_cpu.h"

namespace neodb::encoder {
namespace {

using models::CpuOps;
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
  low_ = MakeLowPrecisionLayers<LowPrecisionLayer>(weights_->layers, precision_, &LayerWeights::qkv,
                                                   &LayerWeights::wo, &LayerWeights::w12,
                                                   &LayerWeights::w3);
  rope_ = ops::MakeRopeTable(std::max<int64_t>(cfg.max_length, 1), head_dim_, cfg.rope_theta);
  // The description's weights: the tensors, with their converted copies.
  params_.embeddings = {&weights_->embeddings};
  params_.final_norm = {&weights_->final_norm};
  for (size_t i = 0; i < weights_->layers.size(); ++i) {
    const LayerWeights& l = weights_->layers[i];
    const LowPrecisionLayer* low = low_.empty() ? nullptr : &low_[i];
    params_.layers.push_back({{&l.attention_norm},
                              {&l.qkv, low != nullptr ? &low->qkv : nullptr},
                              {&l.wo, low != nullptr ? &low->wo : nullptr},
                              {&l.ffn_norm},
                              {&l.w12, low != nullptr ? &low->w12 : nullptr},
                              {&l.w3, low != nullptr ? &low->w3 : nullptr}});
  }
  // BF16 attention only on AMX: without it BF16 matmuls were slower than
  // SGEMM (cpu_kernels.h).
  CpuOps::Options o;
  o.precision = precision_;
  o.eps = static_cast<float>(cfg.norm_eps);
  o.heads = heads_;
  o.head_dim = head_dim_;
  o.rope = &rope_;
  o.attention_bf16 = precision_ != Precision::kF32 && CpuRunsAmxBf16();
  ops_ = CpuOps(o);
}


void NeoBertCpuBackend::EnsureScratch(int64_t tokens) {
  if (tokens <= capacity_tokens_) return;
  capacity_tokens_ = tokens;
  x_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
  normed_ = Tensor::Empty({tokens, hidden_}, DType::kF32);
  wide_ = Tensor::Empty({tokens, std::max(3 * hidden_, 2 * ffn_)}, DType::kF32);
  heads_buf_ = Tensor::Empty({tokens * std::max(3 * hidden_, ffn_)}, DType::kF32);
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
  EnsureScratch(n);
  const int64_t c = hidden_;
  using namespace models::neobert;
  std::vector<Tensor> views(kSlots);
  views[kX] = ScratchView(x_, 0, {n, c});
  views[kA] = views[kO] = views[kF] = ScratchView(normed_, 0, {n, c});
  views[kQkv] = ScratchView(wide_, 0, {n, 3 * c});
  views[kU] = ScratchView(wide_, 0, {n, 2 * ffn_});
  views[kG] = ScratchView(heads_buf_, 0, {n, ffn_});
  views[kHidden] = ScratchView(*out, 0, {n, c});
  ops_.Bind(batch, std::move(views), SplitHeadViews(heads_buf_, heads_, n, head_dim_));
  models::NeoBertHidden(ops_, params_, /*first_layer=*/0);
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
