#pragma once
// The BERT family, the description (Hugging Face BertModel, one segment, no
// padding): the one place its layer sequence is written, over an op set
// (models/op_set.h) as NeoBERT's is (models/neobert_layers.h): inference
// runs it through BertCpuBackend's CpuOps, training through TapeOps.
//
// Over a packed batch of N tokens (sequences end to end):
//   x = LayerNorm(word[ids] + position[t] + type[0])          [N, C]
//   per layer (post-norm):
//     y   = x · qkvᵀ                                           [N, 3C] q | k | v
//     q,k,v = SplitQkv(y + qkv_bias)                           per head
//     o   = Attention(q, k, v) per sequence, scale 1/√D        [N, C]
//     x  += o · woᵀ ;  x = LayerNorm(x + wo_bias)
//     u   = GELU(x · w1ᵀ + w1_bias)                            [N, I]
//     x  += u · w2ᵀ ;  x = LayerNorm(x + w2_bias)
//   last_hidden_state = x (no final norm)

#include <cstdint>
#include <vector>

#include "encoder/models/op_set.h"

namespace neodb::encoder::models {

// BERT's parameters as the op set's weight handles W.
template <typename W>
struct BertLayerParams {
  W qkv;       // [3C, C]: query, key, value weights stacked
  W qkv_bias;  // [3C]
  W wo;        // [C, C]   attention.output.dense
  W wo_bias;   // [C]
  W attention_norm_weight, attention_norm_bias;  // [C] attention.output.LayerNorm
  W w1;        // [I, C]   intermediate.dense
  W w1_bias;   // [I]
  W w2;        // [C, I]   output.dense
  W w2_bias;   // [C]
  W ffn_norm_weight, ffn_norm_bias;  // [C] output.LayerNorm
};
template <typename W>
struct BertParams {
  W word_embeddings;        // [V, C]
  W position_embeddings;    // [P, C]
  W token_type_embeddings;  // [types, C]; row 0 is the one segment's
  W embedding_norm_weight, embedding_norm_bias;  // [C]
  std::vector<BertLayerParams<W>> layers;
};

namespace bert {
enum Slot : int { kX, kY, kHeads, kO, kU, kSlots };
}  // namespace bert

template <OpSet Ops>
typename Ops::Value BertLayer(Ops& op, const BertLayerParams<typename Ops::Weight>& w,
                              typename Ops::Value x) {
  using namespace bert;
  auto y = op.Linear(x, w.qkv, kY);
  auto heads = op.SplitQkv(y, w.qkv_bias, kHeads);
  auto o = op.Attention(heads, kO);
  x = op.AddLinear(x, o, w.wo);
  x = op.LayerNorm(x, &w.wo_bias, w.attention_norm_weight, w.attention_norm_bias, kX);
  auto u = op.Linear(x, w.w1, kU);
  u = op.BiasGelu(u, w.w1_bias);
  x = op.AddLinear(x, u, w.w2);
  return op.LayerNorm(x, &w.w2_bias, w.ffn_norm_weight, w.ffn_norm_bias, kX);
}

// last_hidden_state of layers [first_layer, L): from the embeddings of the
// batch's ids, or (first_layer > 0) from the op set's Input.
template <OpSet Ops>
typename Ops::Value BertHidden(Ops& op, const BertParams<typename Ops::Weight>& w,
                               int64_t first_layer) {
  using namespace bert;
  const int64_t num_layers = static_cast<int64_t>(w.layers.size());
  typename Ops::Value x;
  if (first_layer == 0) {
    x = op.Embedding(w.word_embeddings, kX);
    x = op.AddPositions(x, w.position_embeddings, w.token_type_embeddings);
    x = op.LayerNorm(x, nullptr, w.embedding_norm_weight, w.embedding_norm_bias, kX);
  } else {
    x = op.Input(kX);
  }
  for (int64_t l = first_layer; l < num_layers; ++l) {
    x = BertLayer(op, w.layers[l], op.EnterLayer(l, x));
  }
  return op.EnterLayer(num_layers, x);
}

}  // namespace neodb::encoder::models
