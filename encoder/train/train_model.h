#pragma once
// TrainModel<T>: the NeoBERT encoder forward pass written for training — it
// can keep every activation the backward pass needs — and that backward pass.
// Independent of the inference backends on purpose (training stays off the
// inference path); T = float for training, double for gradient checks.
//
// Inputs are packed batches (encoder/backend.h): sequences end to end, no
// padding, positions restarting at 0 for every sequence.
//
// Thread-safety: const methods only; concurrent calls with distinct outputs
// and activations are safe. The parameter buffer is borrowed, never owned.

#include <cstdint>
#include <vector>

#include "encoder/backend.h"
#include "encoder/checkpoint/config.h"
#include "encoder/train/rope.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// Appends one sequence (already framed by [CLS]/[SEP]) to a packed batch.
void AppendSequence(PackedBatch* batch, const std::vector<int32_t>& ids);

template <typename T>
class TrainModel {
 public:
  // What one layer keeps for its backward pass (all row-major, rows = tokens).
  struct LayerActs {
    std::vector<T> x;      // [rows, C] layer input
    std::vector<T> rstd1;  // [rows]
    std::vector<T> a;      // [rows, C] attention_norm output
    std::vector<T> qkv;    // [rows, 3C] after RoPE on q and k
    std::vector<T> lse;    // [rows, H] softmax log-sum-exp
    std::vector<T> o;      // [rows, C] attention output (pre-wo)
    std::vector<T> x1;     // [rows, C] after the attention residual
    std::vector<T> rstd2;  // [rows]
    std::vector<T> f;      // [rows, C] ffn_norm output
    std::vector<T> u;      // [rows, 2F]
    std::vector<T> s;      // [rows, F] SwiGLU output
  };
  struct Activations {
    int64_t first_layer = 0;
    std::vector<LayerActs> layers;  // layers [first_layer, L)
    std::vector<T> x_final;         // [rows, C] input of the final norm
    std::vector<T> rstd_final;      // [rows]
    std::vector<int32_t> positions;
  };

  // REQUIRES: layout matches `config`; config.max_length bounds every sequence.
  explicit TrainModel(const ParamLayout& layout);

  const ParamLayout& layout() const { return layout_; }

  // Runs layers [first_layer, L), the final norm and pooling over `batch`.
  // first_layer == 0: the input is the token embeddings of batch.ids;
  // otherwise x_in [rows, C] is the hidden state entering first_layer (cached
  // output of a frozen bottom). Writes pooled [batch, C]. When acts != nullptr
  // it keeps the activations (training); else it runs in no-grad mode with
  // one layer of scratch. When boundary_out != nullptr, the hidden state
  // entering layer `boundary_layer` (first_layer <= boundary_layer <= L) is
  // copied into it ([rows, C]).
  void Forward(const T* params, const PackedBatch& batch, int64_t first_layer, const T* x_in,
               Pooling pooling, T* pooled, Activations* acts, int64_t boundary_layer = -1,
               T* boundary_out = nullptr) const;

  // Back-propagates d_pooled [batch, C] (mean pooling) through `acts` and ADDS
  // the gradient of every parameter at flat offset >= grad_begin into
  // grads[offset - grad_begin]. grad_begin must be layout.TrainableBegin(n)
  // for some n, and the layers it trains must be in `acts`.
  void Backward(const T* params, const PackedBatch& batch, const Activations& acts,
                const T* d_pooled, int64_t grad_begin, T* grads) const;

 private:
  void LayerForward(const T* params, int64_t l, const PackedBatch& batch, const int32_t* positions,
                    const T* x, LayerActs* acts, bool keep, T* x_out) const;

  ParamLayout layout_;
  int64_t c_, f_, h_, d_;
  RopeTable<T> rope_;
};

}  // namespace neodb::encoder::train
