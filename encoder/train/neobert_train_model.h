#pragma once
// NeoBERT's layer sequence for training (NEOBERT.md §3), behind TrainModel:
// token embeddings; per layer pre-RMSNorm attention with RoPE and a SwiGLU
// FFN; the final RMSNorm. Forward keeps what backward needs; backward is
// the exact reverse.
//
// Thread-safety: const methods only (see TrainModel).

#include <cstdint>
#include <vector>

#include "encoder/train/layer_stack.h"
#include "encoder/train/rope.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

template <typename T>
class NeoBertTrainModel final : public ArchTrainModel<T> {
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
  struct Acts final : LayerStackActs<LayerActs> {
    std::vector<T> x_final;         // [rows, C] input of the final norm
    std::vector<T> rstd_final;      // [rows]
    std::vector<int32_t> positions;
  };

  // REQUIRES: layout is NeoBERT's.
  explicit NeoBertTrainModel(const ParamLayout& layout);

  void Forward(const T* params, const PackedBatch& batch, int64_t first_layer, const T* x_in,
               T* hidden, std::unique_ptr<ArchActivations>* acts, int64_t boundary_layer,
               T* boundary_out) const override;
  void BackwardFromHidden(const T* params, const PackedBatch& batch, const ArchActivations& acts,
                          const T* d_hidden, int64_t grad_begin, T* grads) const override;

 private:
  void LayerForward(const T* params, int64_t l, const PackedBatch& batch, const int32_t* positions,
                    const T* x, LayerActs* acts, bool keep, T* x_out) const;

  ParamLayout layout_;
  int64_t c_, f_, h_, d_;
  RopeTable<T> rope_;
};

}  // namespace neodb::encoder::train
