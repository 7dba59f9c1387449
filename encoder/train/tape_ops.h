#pragma once
// TapeOps<T>: the op set (encoder/models/op_set.h) through which training
// runs a model description (models/neobert_layers.h, models/bert_layers.h),
// T = float for training, double for gradient checks. Each op runs its
// training body (train/{rms_norm,layer_norm,linear,rope,attention,swiglu,
// gelu,embedding_pooling}.h) on values of the flat parameter buffer and, in
// training mode, appends to a Tape what its backward pass needs: the values
// it reads again and a step that back-propagates through it. The backward
// pass is the tape replayed in reverse (TapeBackward), so no architecture
// writes its backward sequence: it follows from the description.
//
// Values are [rows, cols] matrices (rows = the batch's tokens) named by an
// index into the tape. A value no step reads again is "unsaved"; the ops the
// description marks as consuming their input (AddPositions, QkvRope,
// SplitQkv's bias, LayerNorm's bias, BiasGelu's bias, and AddLinear when its
// input is unsaved) write into it in place, as the inference op set does,
// and at each layer boundary the storage of the previous layer's unsaved
// values returns to a pool. In no-grad mode nothing is saved, so one layer
// of values lives at a time.
//
// Thread-safety: a TapeOps serves one forward pass; distinct tapes are
// independent.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "encoder/backend.h"
#include "encoder/train/layer_stack.h"
#include "encoder/train/rope.h"
#include "encoder/train/train_model.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// A parameter as the description reads it: `parts` row blocks of [rows,
// cols] in the flat buffer, read as one [parts · rows, cols] matrix (BERT's
// query, key and value are three checkpoint tensors; its qkv is their
// stack). A vector has cols 1.
struct TrainWeight {
  std::array<int64_t, 3> offset{};  // of each part
  int parts = 1;
  int64_t rows = 0;  // per part
  int64_t cols = 1;
};
TrainWeight Param(const ParamEntry& e);
// REQUIRES: a, b and c have one shape.
TrainWeight StackedParams(const ParamEntry& a, const ParamEntry& b, const ParamEntry& c);

template <typename T>
class TapeGrads;

// What a training-mode forward pass keeps for its backward pass.
template <typename T>
struct Tape final : ArchActivations {
  struct Step {
    int out = -1;           // the value the op wrote
    bool in_place = false;  // out was also its input (its gradient lives on)
    std::function<void(TapeGrads<T>&)> backward;
  };
  int64_t first_layer = 0;
  std::vector<std::vector<T>> values;  // by index; empty once its storage is recycled
  std::vector<int64_t> cols;           // of each value
  std::vector<char> saved;             // a step reads the value again
  std::vector<Step> steps;
  // steps.size() on entering layer first_layer + i, for i in [0, L − first_layer].
  std::vector<size_t> layer_steps;
  int hidden = -1;                 // the description's result
  std::vector<int32_t> positions;  // of each token in its sequence
  std::vector<std::vector<T>> pool;  // storage for new values
};

// The gradients a backward pass accumulates: of values, and (ADDED into
// `grads`) of the parameters at flat offset >= grad_begin.
template <typename T>
class TapeGrads {
 public:
  TapeGrads(const Tape<T>& tape, const T* params, const PackedBatch& batch, int64_t grad_begin,
            T* grads);
  const PackedBatch& batch() const { return batch_; }
  int64_t rows() const { return rows_; }
  const Tape<T>& tape() const { return tape_; }
  const T* V(int v) const { return tape_.values[static_cast<size_t>(v)].data(); }
  const T* P(const TrainWeight& w, int part = 0) const { return params_ + w.offset[part]; }
  // The gradient of a parameter part; nullptr when it is frozen.
  T* DP(const TrainWeight& w, int part = 0) const;
  // The gradient of value v, zeros on first use.
  T* D(int v);
  // The same for a body that overwrites it (attention, SwiGLU, GELU):
  // CHECKs that nothing has added to it yet.
  T* Fresh(int v);
  void Release(int v);

 private:
  std::vector<T>* Take(int v);

  const Tape<T>& tape_;
  const T* params_;
  const PackedBatch& batch_;
  int64_t rows_;
  int64_t grad_begin_;
  T* grads_;
  std::vector<std::vector<T>> d_;
  std::vector<char> live_;
  std::vector<std::vector<T>> pool_;
};

template <typename T>
class TapeOps {
 public:
  using Value = int;
  using Heads = int;  // q, k, v head-interleaved in one [rows, 3C] value
  using Weight = TrainWeight;
  struct Options {
    double eps = 0;  // of RmsNorm / LayerNorm
    int64_t heads = 0, head_dim = 0;
    const RopeTable<T>* rope = nullptr;  // QkvRope's (NeoBERT)
  };

  // `tape` receives the values and steps (training); nullptr runs in no-grad
  // mode. x_in: Input's value (the hidden state entering first_layer, [rows,
  // C]); boundary_out (may be null) receives the state entering
  // boundary_layer.
  TapeOps(const T* params, const PackedBatch& batch, Options options, Tape<T>* tape,
          int64_t first_layer, const T* x_in, int64_t boundary_layer, T* boundary_out);

  Value Input(int slot);
  Value Embedding(const Weight& table, int slot);
  Value AddPositions(Value x, const Weight& positions, const Weight& type);
  Value RmsNorm(Value x, const Weight& w, int slot);
  Value LayerNorm(Value x, const Weight* bias, const Weight& w, const Weight& b, int slot);
  Value Linear(Value x, const Weight& w, int slot);
  Value AddLinear(Value x, Value in, const Weight& w);
  Heads QkvRope(Value y, int slot);
  Heads SplitQkv(Value y, const Weight& bias, int slot);
  Value Attention(Heads heads, int slot);
  Value SwiGlu(Value u, int slot);
  Value BiasGelu(Value u, const Weight& bias);
  Value EnterLayer(int64_t l, Value x);

  // Copies the description's result v into out [rows, cols(v)]; the tape's
  // hidden.
  void Finish(Value v, T* out);

 private:
  int New(int64_t cols);
  T* M(int v) { return t_->values[static_cast<size_t>(v)].data(); }
  const T* V(int v) const { return t_->values[static_cast<size_t>(v)].data(); }
  const T* P(const Weight& w, int part = 0) const { return params_ + w.offset[part]; }
  int64_t cols(int v) const { return t_->cols[static_cast<size_t>(v)]; }
  void Save(int v) { t_->saved[static_cast<size_t>(v)] = 1; }
  // CHECKs that an op may write into v (no step reads it again).
  void Consume(int v) const;
  void Record(int out, bool in_place, std::function<void(TapeGrads<T>&)> backward);

  const T* params_;
  const PackedBatch& batch_;
  Options o_;
  Tape<T> local_;  // no-grad mode's
  Tape<T>* t_;
  bool record_;
  int64_t rows_;
  const T* x_in_;
  int64_t boundary_layer_;
  T* boundary_out_;
  std::vector<int> made_;  // values made since the last layer boundary
};

// Back-propagates d_hidden [rows, C] (the gradient of tape.hidden) through
// the steps of layers [stop_layer, L) and what follows them, and through the
// embeddings too when grad_begin == 0; ADDS each parameter's gradient at
// flat offset >= grad_begin into grads[offset − grad_begin].
template <typename T>
void TapeBackward(const Tape<T>& tape, const T* params, const PackedBatch& batch,
                  const T* d_hidden, int64_t grad_begin, int64_t stop_layer, T* grads);

// An architecture trained through its description: `hidden` is the
// description's entry point (models::NeoBertHidden, models::BertHidden)
// instantiated for TapeOps<T>, `params` its weights as flat-buffer handles,
// `rope` (may be null) the table options.rope then points at.
template <typename T, typename Params>
class DescribedTrainModel final : public ArchTrainModel<T> {
 public:
  using Hidden = int (*)(TapeOps<T>&, const Params&, int64_t);
  DescribedTrainModel(const ParamLayout& layout, Params params,
                      typename TapeOps<T>::Options options,
                      std::shared_ptr<const RopeTable<T>> rope, Hidden hidden)
      : layout_(layout),
        params_(std::move(params)),
        options_(options),
        rope_(std::move(rope)),
        hidden_(hidden) {
    options_.rope = rope_.get();
  }

  void Forward(const T* params, const PackedBatch& batch, int64_t first_layer, const T* x_in,
               T* hidden, std::unique_ptr<ArchActivations>* arch_acts, int64_t boundary_layer,
               T* boundary_out) const override {
    CheckForwardArgs(layout_, batch, first_layer, x_in, boundary_layer, boundary_out);
    Tape<T>* tape = ReuseOrMakeActs<Tape<T>>(arch_acts);
    TapeOps<T> op(params, batch, options_, tape, first_layer, x_in, boundary_layer, boundary_out);
    op.Finish(hidden_(op, params_, first_layer), hidden);
  }

  void BackwardFromHidden(const T* params, const PackedBatch& batch, const ArchActivations& acts,
                          const T* d_hidden, int64_t grad_begin, T* grads) const override {
    const Tape<T>& tape = static_cast<const Tape<T>&>(acts);
    const int64_t stop_layer = LowestTrainedLayer(layout_, grad_begin, tape.first_layer);
    TapeBackward(tape, params, batch, d_hidden, grad_begin, stop_layer, grads);
  }

 private:
  ParamLayout layout_;
  Params params_;
  typename TapeOps<T>::Options options_;
  std::shared_ptr<const RopeTable<T>> rope_;
  Hidden hidden_;
};

}  // namespace neodb::encoder::train
