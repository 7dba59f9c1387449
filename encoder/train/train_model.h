#pragma once
// TrainModel<T>: the encoder forward pass run for training — it can keep
// every activation the backward pass needs — and that backward pass, for
// either architecture the trainer runs. Everything above it (the trainer,
// GradCache, distillation, MLM, evaluation) talks to this class only. The
// layer sequence is each architecture's description (encoder/models/
// neobert_layers.h, bert_layers.h), the same the inference backends run, here
// over the training op set (tape_ops.h: training bodies, activations kept,
// the backward replayed from a tape); pooling and its backward are shared
// here. T = float for training, double for gradient checks.
//
// Inputs are packed batches (encoder/backend.h): sequences end to end, no
// padding, positions restarting at 0 for every sequence.
//
// Thread-safety: const methods only; concurrent calls with distinct outputs
// and activations are safe. The parameter buffer is borrowed, never owned.

#include <cstdint>
#include <memory>
#include <vector>

#include "encoder/backend.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// Appends one sequence (already framed by [CLS]/[SEP]) to a packed batch.
void AppendSequence(PackedBatch* batch, const std::vector<int32_t>& ids);

// What an architecture's forward keeps for its backward (the tape; opaque to
// everyone else).
struct ArchActivations {
  virtual ~ArchActivations() = default;
};

// One architecture's training pass (the interface behind TrainModel).
template <typename T>
class ArchTrainModel {
 public:
  virtual ~ArchTrainModel() = default;
  // As TrainModel::Forward up to the final hidden states, which it writes to
  // hidden [rows, C]. *acts (when acts != nullptr) is created or reused.
  virtual void Forward(const T* params, const PackedBatch& batch, int64_t first_layer,
                       const T* x_in, T* hidden, std::unique_ptr<ArchActivations>* acts,
                       int64_t boundary_layer, T* boundary_out) const = 0;
  // As TrainModel::BackwardFromHidden.
  virtual void BackwardFromHidden(const T* params, const PackedBatch& batch,
                                  const ArchActivations& acts, const T* d_hidden,
                                  int64_t grad_begin, T* grads) const = 0;
};

template <typename T>
class TrainModel {
 public:
  struct Activations {
    int64_t first_layer = 0;
    Pooling pooling = Pooling::kMean;  // what Forward pooled with (Backward undoes it)
    std::unique_ptr<ArchActivations> arch;
  };

  // The architecture is the layout's. `pooling` is the sentence vector the
  // training objectives use (GradCache, distillation): mean for NeoBERT, the
  // model directory's own (sentence-transformers) for BERT.
  // REQUIRES: every sequence fits layout.max_length().
  explicit TrainModel(const ParamLayout& layout, Pooling pooling = Pooling::kMean);
  // The same with the architecture's training pass given (the CUDA one,
  // cuda_train_model.h); null: the CPU's, as above.
  TrainModel(const ParamLayout& layout, Pooling pooling,
             std::shared_ptr<const ArchTrainModel<T>> arch);

  const ParamLayout& layout() const { return layout_; }
  Pooling pooling() const { return pooling_; }

  // Runs layers [first_layer, L), the final norm (NeoBERT) and pooling over
  // `batch`. first_layer == 0: the input is the embeddings of batch.ids;
  // otherwise x_in [rows, C] is the hidden state entering first_layer (cached
  // output of a frozen bottom). Writes pooled [batch, C] (not normalised).
  // When acts != nullptr it keeps the activations (training); else it runs in
  // no-grad mode with one layer of scratch. When boundary_out != nullptr, the
  // hidden state entering layer `boundary_layer` (first_layer <=
  // boundary_layer <= L) is copied into it ([rows, C]).
  // When hidden_out != nullptr the final hidden states (last_hidden_state,
  // [rows, C]) are copied into it; pooled may then be nullptr to skip pooling
  // (MLM pre-training uses every token).
  void Forward(const T* params, const PackedBatch& batch, int64_t first_layer, const T* x_in,
               Pooling pooling, T* pooled, Activations* acts, int64_t boundary_layer = -1,
               T* boundary_out = nullptr, T* hidden_out = nullptr) const;

  // Back-propagates d_pooled [batch, C] (through the pooling `acts` was made
  // with) and ADDS the gradient of every parameter at flat offset >=
  // grad_begin into grads[offset - grad_begin]. grad_begin must be
  // layout.TrainableBegin(n) for some n, and the layers it trains must be in
  // `acts`.
  void Backward(const T* params, const PackedBatch& batch, const Activations& acts,
                const T* d_pooled, int64_t grad_begin, T* grads) const;

  // The same from d_hidden [rows, C], the gradient of the final hidden
  // states (e.g. from the MLM head) instead of a pooled gradient.
  void BackwardFromHidden(const T* params, const PackedBatch& batch, const Activations& acts,
                          const T* d_hidden, int64_t grad_begin, T* grads) const;

 private:
  ParamLayout layout_;
  Pooling pooling_;
  std::shared_ptr<const ArchTrainModel<T>> arch_;
};

}  // namespace neodb::encoder::train
