#pragma once
// BERT's layer sequence for training, behind TrainModel: exactly the order
// encoder/models/bert.h runs (Hugging Face BertModel, one segment):
//   x = LayerNorm(word[ids] + position[t] + token_type[0])
//   per layer (post-norm):
//     q, k, v = x·Wqᵀ + bq, x·Wkᵀ + bk, x·Wvᵀ + bv
//     o  = Attention(q, k, v) per sequence, scale 1/√D (no RoPE)
//     x1 = LayerNorm(x + o·Woᵀ + bo)
//     x  = LayerNorm(x1 + GELU(x1·W1ᵀ + b1)·W2ᵀ + b2)
//   last_hidden_state = x (no final norm)
// Forward keeps what backward needs; backward is the exact reverse. The
// attention op is NeoBERT's (train/attention.h, head-interleaved QKV), so
// q, k, v are interleaved into that layout after their projections.
//
// Thread-safety: const methods only (see TrainModel).

#include <cstdint>
#include <vector>

#include "encoder/train/layer_stack.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

template <typename T>
class BertTrainModel final : public ArchTrainModel<T> {
 public:
  // What one layer keeps for its backward pass (row-major, rows = tokens).
  struct LayerActs {
    std::vector<T> x;             // [rows, C] layer input
    std::vector<T> qkv;           // [rows, 3C] head-interleaved, biases added
    std::vector<T> lse;           // [rows, H]
    std::vector<T> o;             // [rows, C] attention output (pre-Wo)
    std::vector<T> y1;            // [rows, C] x + o·Woᵀ + bo (LayerNorm 1 input)
    std::vector<T> mean1, rstd1;  // [rows]
    std::vector<T> x1;            // [rows, C] LayerNorm 1 output
    std::vector<T> u;             // [rows, I] pre-GELU
    std::vector<T> g;             // [rows, I] GELU output
    std::vector<T> y2;            // [rows, C] LayerNorm 2 input
    std::vector<T> mean2, rstd2;  // [rows]
  };
  struct Acts final : LayerStackActs<LayerActs> {
    std::vector<T> e;                  // [rows, C] summed embeddings (LayerNorm input)
    std::vector<T> e_mean, e_rstd;     // [rows]
  };

  // REQUIRES: layout is BERT's.
  explicit BertTrainModel(const ParamLayout& layout);

  void Forward(const T* params, const PackedBatch& batch, int64_t first_layer, const T* x_in,
               T* hidden, std::unique_ptr<ArchActivations>* acts, int64_t boundary_layer,
               T* boundary_out) const override;
  void BackwardFromHidden(const T* params, const PackedBatch& batch, const ArchActivations& acts,
                          const T* d_hidden, int64_t grad_begin, T* grads) const override;

 private:
  void LayerForward(const T* params, int64_t l, const PackedBatch& batch, const T* x,
                    LayerActs* acts, bool keep, T* x_out) const;

  ParamLayout layout_;
  int64_t c_, i_, h_, d_;
  double eps_;
};

}  // namespace neodb::encoder::train
