#include "encoder/train/train_model.h"

#include "common/status_macros.h"
#include "encoder/train/bert_train_model.h"
#include "encoder/train/embedding_pooling.h"
#include "encoder/train/neobert_train_model.h"

namespace neodb::encoder::train {
namespace {

template <typename T>
std::shared_ptr<const ArchTrainModel<T>> MakeArch(const ParamLayout& layout) {
  switch (layout.architecture()) {
    case Architecture::kNeoBert:
      return std::make_shared<const NeoBertTrainModel<T>>(layout);
    case Architecture::kBert:
      return std::make_shared<const BertTrainModel<T>>(layout);
  }
  NEODB_CHECK(false);
  return nullptr;
}

}  // namespace

void AppendSequence(PackedBatch* batch, const std::vector<int32_t>& ids) {
  if (batch->offsets.empty()) batch->offsets.push_back(0);
  batch->ids.insert(batch->ids.end(), ids.begin(), ids.end());
  batch->offsets.push_back(static_cast<int64_t>(batch->ids.size()));
}

template <typename T>
TrainModel<T>::TrainModel(const ParamLayout& layout, Pooling pooling)
    : layout_(layout), pooling_(pooling), arch_(MakeArch<T>(layout)) {}

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
