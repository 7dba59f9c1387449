#pragma once
// What a model description (neobert_layers.h, bert_layers.h) asks of the op
// set it runs over, the one seam between "the layer sequence" and "how each
// op runs". Two op sets implement it: CpuOps (models/cpu_ops.h: the CPU
// backends, the op fronts of encoder/ops on scratch views) and
// train::TapeOps<T> (train/tape_ops.h: the training bodies, what each
// backward needs kept on a tape, the backward replayed from it).
//
// Why an op set rather than one set of fronts both call: inference wants F32
// Tensors, BF16/INT8 projections and buffers shared between intermediates;
// training wants T = float or double, every activation its backward reads
// and that backward. A description written once over an op set gives each
// its own bodies and memory plan without either writing the model again; the
// backward is derived from the ops the description ran, never written per
// architecture.
//
// Values are handles (Ops::Value, Ops::Heads), copied freely. Every op that
// makes a value takes the description's name for it (`slot`: the
// architecture's Slot enum); an op set may place it where it likes (CpuOps
// maps names to buffers, TapeOps ignores them). Ops over a packed batch (the
// op set knows it); [N, ·] below is one row per token.
//
// Consumed inputs: the ops marked "consumes x" may write their result into
// x's storage (CpuOps always does, as the fast path wants), so a description
// never reads x again after passing it there; it reads only the result.
//
//   Value Embedding(table, slot)        table[ids]                        [N, C]
//   Value Input(slot)                   the hidden state entering the first
//                                       layer run (training from a cached
//                                       frozen bottom; CpuOps never)
//   Value AddPositions(x, pos, type)    x + pos[t] + type[0]; consumes x
//   Value RmsNorm(x, w, slot)           x / rms(x) ⊙ w
//   Value LayerNorm(x, bias, w, b, slot)  LayerNorm(x + bias) ⊙ w + b
//                                       (bias may be null); with a bias it
//                                       consumes x
//   Value Linear(x, w, slot)            x · wᵀ                            [N, rows(w)]
//   Value AddLinear(x, in, w)           x + in · wᵀ (the residual); consumes x
//   Heads QkvRope(y, slot)              q, k, v of the head-interleaved y, RoPE
//                                       on q and k (NeoBERT); consumes y
//   Heads SplitQkv(y, bias, slot)       q, k, v of y + bias, y = q | k | v
//                                       (BERT); consumes y
//   Value Attention(heads, slot)        softmax(q·kᵀ/√D)·v per sequence, per
//                                       head, heads concatenated      [N, C]
//   Value SwiGlu(u, slot)               SiLU(u[:, :F]) ⊙ u[:, F:]         [N, F]
//   Value BiasGelu(u, bias)             GELU(u + bias); consumes u
//   Value EnterLayer(l, x)              marks the start of layer l (l == L:
//                                       what follows the layers); returns x

#include <concepts>
#include <cstdint>

namespace neodb::encoder::models {

template <typename Ops>
concept OpSet = requires(Ops& op, typename Ops::Value x, typename Ops::Heads h,
                         const typename Ops::Weight& w, int slot, int64_t l) {
  { op.Embedding(w, slot) } -> std::same_as<typename Ops::Value>;
  { op.Input(slot) } -> std::same_as<typename Ops::Value>;
  { op.AddPositions(x, w, w) } -> std::same_as<typename Ops::Value>;
  { op.RmsNorm(x, w, slot) } -> std::same_as<typename Ops::Value>;
  { op.LayerNorm(x, &w, w, w, slot) } -> std::same_as<typename Ops::Value>;
  { op.Linear(x, w, slot) } -> std::same_as<typename Ops::Value>;
  { op.AddLinear(x, x, w) } -> std::same_as<typename Ops::Value>;
  { op.QkvRope(x, slot) } -> std::same_as<typename Ops::Heads>;
  { op.SplitQkv(x, w, slot) } -> std::same_as<typename Ops::Heads>;
  { op.Attention(h, slot) } -> std::same_as<typename Ops::Value>;
  { op.SwiGlu(x, slot) } -> std::same_as<typename Ops::Value>;
  { op.BiasGelu(x, w) } -> std::same_as<typename Ops::Value>;
  { op.EnterLayer(l, x) } -> std::same_as<typename Ops::Value>;
};

}  // namespace neodb::encoder::models
