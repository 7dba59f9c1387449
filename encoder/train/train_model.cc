#include "encoder/train/train_model.h"

#include "common/status_macros.h"
#include "encoder/models/bert_layers.h"
#include "encoder/models/neobert_layers.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/tape_ops.h"
#include "encoder/train/train_weights.h"

namespace neodb::encoder::train {
namespace {

// NeoBERT: its description over the flat layout's tensors.
template <typename T>
std::shared_ptr<const ArchTrainModel<T>> MakeNeoBert(const ParamLayout& layout) {
  const NeoBertConfig& cfg = layout.config();
  typename TapeOps<T>::Options o;
  o.eps = cfg.norm_eps;
  o.heads = cfg.num_attention_heads;
  o.head_dim = cfg.head_dim();
  auto rope = std::make_shared<const RopeTable<T>>(cfg.max_length, cfg.head_dim(), cfg.rope_theta);
  return std::make_shared<const DescribedTrainModel<T, models::NeoBertParams<TrainWeight>>>(
      layout, NeoBertTrainWeights(layout), o, std::move(rope), &models::NeoBertHidden<TapeOps<T>>);
}

// BERT: its description over the flat layout, whose query, key and value
// (the Hugging Face tensors) it reads as one stacked qkv.
template <typename T>
std::shared_ptr<const ArchTrainModel<T>> MakeBert(const ParamLayout& layout) {
  const BertConfig& cfg = layout.bert_config();
  typename TapeOps<T>::Options o;
  o.eps = cfg.layer_norm_eps;
  o.heads = cfg.num_attention_heads;
  o.head_dim = cfg.head_dim();
  return std::make_shared<const DescribedTrainModel<T, models::BertParams<TrainWeight>>>(
      layout, BertTrainWeights(layout), o, nullptr, &models::BertHidden<TapeOps<T>>);
}

template <typename T>
std::shared_ptr<const ArchTrainModel<T>> MakeArch(const ParamLayout& layout) {
  switch (layout.architecture()) {
    case Architecture::kNeoBert:
      return MakeNeoBert<T>(layout);
    case Architecture::kBert:
      return MakeBert<T>(layout);
  }
  NEODB_CHECK(false);
  return nullptr;
}

}  // namespace

models::NeoBertParams<TrainWeight> NeoBertTrainWeights(const ParamLayout& layout) {
  models::NeoBertParams<TrainWeight> p;
  p.embeddings = Param(layout.embeddings());
  p.final_norm = Param(layout.final_norm());
  for (int64_t l = 0; l < layout.num_layers(); ++l) {
    auto w = [&](int t) { return Param(layout.layer(l, t)); };
    p.layers.push_back({w(kAttentionNorm), w(kQkv), w(kWo), w(kFfnNorm), w(kW12), w(kW3)});
  }
  return p;
}

models::BertParams<TrainWeight> BertTrainWeights(const ParamLayout& layout) {
  const std::vector<ParamEntry>& en = layout.entries();
  models::BertParams<TrainWeight> p;
  p.word_embeddings = Param(en[kBertWordEmb]);
  p.position_embeddings = Param(en[kBertPositionEmb]);
  p.token_type_embeddings = Param(en[kBertTypeEmb]);
  p.embedding_norm_weight = Param(en[kBertEmbNormW]);
  p.embedding_norm_bias = Param(en[kBertEmbNormB]);
  for (int64_t l = 0; l < layout.num_layers(); ++l) {
    auto e = [&](int t) { return layout.layer(l, t); };
    auto w = [&](int t) { return Param(e(t)); };
    p.layers.push_back({StackedParams(e(kBertQ), e(kBertK), e(kBertV)),
                        StackedParams(e(kBertQBias), e(kBertKBias), e(kBertVBias)),
                        w(kBertWo), w(kBertWoBias), w(kBertAttnNormW), w(kBertAttnNormB),
                        w(kBertW1), w(kBertW1Bias), w(kBertW2), w(kBertW2Bias),
                        w(kBertFfnNormW), w(kBertFfnNormB)});
  }
  return p;
}

void AppendSequence(PackedBatch* batch, const std::vector<int32_t>& ids) {
  if (batch->offsets.empty()) batch->offsets.push_back(0);
  batch->ids.insert(batch->ids.end(), ids.begin(), ids.end());
  batch->offsets.push_back(static_cast<int64_t>(batch->ids.size()));
}

template <typename T>
TrainModel<T>::TrainModel(const ParamLayout& layout, Pooling pooling)
    : layout_(layout), pooling_(pooling), arch_(MakeArch<T>(layout)) {}

template <typename T>
TrainModel<T>::TrainModel(const ParamLayout& layout, Pooling pooling,
                          std::shared_ptr<const ArchTrainModel<T>> arch)
    : layout_(layout),
      pooling_(pooling),
      arch_(arch != nullptr ? std::move(arch) : MakeArch<T>(layout)) {}

template <typename T>
void TrainModel<T>::Forward(const T* params, const PackedBatch& batch, int64_t first_layer,
                            const T* x_in, Pooling pooling, T* pooled, Activations* acts,
                            int64_t boundary_layer, T* boundary_out, T* hidden_out) const {
  const int64_t c = layout_.hidden_size();
  NEODB_CHECK(pooled != nullptr || hidden_out != nullptr);
  std::vector<T> local;
  T* h = hidden_out;
  if (h == nullptr) {
    local.resize(static_cast<size_t>(batch.total_tokens() * c));
    h = local.data();
  }
  arch_->Forward(params, batch, first_layer, x_in, h, acts != nullptr ? &acts->arch : nullptr,
                 boundary_layer, boundary_out);
  if (acts != nullptr) {
    acts->first_layer = first_layer;
    acts->pooling = pooling;
  }
  if (pooled == nullptr) return;
  if (pooling == Pooling::kMean) {
    MeanPoolForward(h, batch.offsets.data(), batch.batch_size(), c, pooled);
  } else {
    ClsPoolForward(h, batch.offsets.data(), batch.batch_size(), c, pooled);
  }
}

template <typename T>
void TrainModel<T>::Backward(const T* params, const PackedBatch& batch, const Activations& acts,
                             const T* d_pooled, int64_t grad_begin, T* grads) const {
  const int64_t c = layout_.hidden_size();
  std::vector<T> dh(static_cast<size_t>(batch.total_tokens() * c), T(0));
  if (acts.pooling == Pooling::kMean) {
    MeanPoolBackward(d_pooled, batch.offsets.data(), batch.batch_size(), c, dh.data());
  } else {
    ClsPoolBackward(d_pooled, batch.offsets.data(), batch.batch_size(), c, dh.data());
  }
  BackwardFromHidden(params, batch, acts, dh.data(), grad_begin, grads);
}

template <typename T>
void TrainModel<T>::BackwardFromHidden(const T* params, const PackedBatch& batch,
                                       const Activations& acts, const T* d_hidden,
                                       int64_t grad_begin, T* grads) const {
  NEODB_CHECK(acts.arch != nullptr);
  arch_->BackwardFromHidden(params, batch, *acts.arch, d_hidden, grad_begin, grads);
}

template class TrainModel<float>;
template class TrainModel<double>;

}  // namespace neodb::encoder::train
