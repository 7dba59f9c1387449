#pragma once
// NeoBERT, the description (NEOBERT.md §3): the one place its layer sequence
// is written. It runs over an op set (models/op_set.h), which gives each op
// its body: NeoBertCpuBackend's CpuOps (inference: the op fronts of
// encoder/ops, F32/BF16/INT8, scratch buffers) and training's TapeOps
// (train/tape_ops.h: T = float or double, activations kept, the backward
// derived by replaying the ops in reverse).
//
// Over a packed batch of N tokens (sequences end to end, no padding):
//   x  = Embedding(ids)                                  [N, C]
//   per layer:
//     a   = RmsNorm(x, attention_norm)                   [N, C]
//     y   = a · qkvᵀ                                     [N, 3C] head-interleaved
//     q,k,v = QkvRope(y)                                 RoPE on q, k
//     o   = Attention(q, k, v) per sequence per head     [N, C] (o[Dh + d])
//     x  += o · woᵀ
//     f   = RmsNorm(x, ffn_norm)                         [N, C]
//     u   = f · w12ᵀ                                     [N, 2F]
//     g   = SiLU(u[:, :F]) ⊙ u[:, F:]                    [N, F]
//     x  += g · w3ᵀ
//   last_hidden_state = RmsNorm(x, final_norm)

#include <cstdint>
#include <vector>

#include "encoder/models/op_set.h"

namespace neodb::encoder::models {

// NeoBERT's parameters as the op set's weight handles W, in checkpoint order.
template <typename W>
struct NeoBertLayerParams {
  W attention_norm;  // [C]
  W qkv;             // [3C, C], head-interleaved rows as stored
  W wo;              // [C, C]
  W ffn_norm;        // [C]
  W w12;             // [2F, C]: rows [0, F) gate, [F, 2F) linear
  W w3;              // [C, F]
};
template <typename W>
struct NeoBertParams {
  W embeddings;  // [V, C]
  std::vector<NeoBertLayerParams<W>> layers;
  W final_norm;  // [C]
};

// The intermediates the description names; an op set may place each in a
// buffer of its own choosing (the CPU backend shares buffers between names
// whose lifetimes do not overlap).
namespace neobert {
enum Slot : int { kX, kA, kQkv, kHeads, kO, kF, kU, kG, kHidden, kSlots };
}  // namespace neobert

template <OpSet Ops>
typename Ops::Value NeoBertLayer(Ops& op, const NeoBertLayerParams<typename Ops::Weight>& w,
                                 typename Ops::Value x) {
  using namespace neobert;
  auto a = op.RmsNorm(x, w.attention_norm, kA);
  auto y = op.Linear(a, w.qkv, kQkv);
  auto heads = op.QkvRope(y, kHeads);
  auto o = op.Attention(heads, kO);
  x = op.AddLinear(x, o, w.wo);
  auto f = op.RmsNorm(x, w.ffn_norm, kF);
  auto u = op.Linear(f, w.w12, kU);
  auto g = op.SwiGlu(u, kG);
  return op.AddLinear(x, g, w.w3);
}

// The final hidden states of layers [first_layer, L) and the final norm; the
// input is the embeddings of the batch's ids, or (first_layer > 0) the op
// set's Input, the hidden state entering first_layer.
template <OpSet Ops>
typename Ops::Value NeoBertHidden(Ops& op, const NeoBertParams<typename Ops::Weight>& w,
                                  int64_t first_layer) {
  const int64_t num_layers = static_cast<int64_t>(w.layers.size());
  auto x = first_layer == 0 ? op.Embedding(w.embeddings, neobert::kX) : op.Input(neobert::kX);
  for (int64_t l = first_layer; l < num_layers; ++l) {
    x = NeoBertLayer(op, w.layers[l], op.EnterLayer(l, x));
  }
  x = op.EnterLayer(num_layers, x);
  return op.RmsNorm(x, w.final_norm, neobert::kHidden);
}

}  // namespace neodb::encoder::models
