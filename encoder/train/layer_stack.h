#pragma once
// What both architectures' training passes share around their own layer
// (bert_train_model.cc, neobert_train_model.cc): the checks of Forward's and
// BackwardFromHidden's arguments, the activations of a stack of layers, the
// loop over layers [first, last) of the hidden state `x`, keeping each
// layer's activations for the backward pass or one layer of scratch, and a
// copy of the hidden state entering `boundary_layer` (the input a frozen
// bottom's cache holds); and the two buffer helpers their activation code
// uses.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status_macros.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

// Sizes `v` to n elements (contents unspecified where it grew).
template <typename T>
void Resize(std::vector<T>* v, int64_t n) {
  v->resize(static_cast<size_t>(n));
}

// `v` as n zeros.
template <typename T>
void Zero(std::vector<T>* v, int64_t n) {
  v->assign(static_cast<size_t>(n), T(0));
}

// What a forward pass keeps of its layers: those of [first_layer, L). An
// architecture's Acts derive from it and add what lies outside the layers.
template <typename LayerActs>
struct LayerStackActs : ArchActivations {
  int64_t first_layer = 0;
  std::vector<LayerActs> layers;  // layers [first_layer, L)
};

// The activations a Forward fills in *arch_acts: the ones there when they
// are an `Acts`, else new ones put there; nullptr when arch_acts is
// (no-grad mode).
template <typename Acts>
Acts* ReuseOrMakeActs(std::unique_ptr<ArchActivations>* arch_acts) {
  if (arch_acts == nullptr) return nullptr;
  Acts* acts = dynamic_cast<Acts*>(arch_acts->get());
  if (acts == nullptr) {
    *arch_acts = std::make_unique<Acts>();
    acts = static_cast<Acts*>(arch_acts->get());
  }
  return acts;
}

// CHECKs ArchTrainModel::Forward's arguments (TrainModel::Forward states
// them): the layer range, x_in when the bottom is skipped, the boundary, each
// sequence's length and, from the bottom, each token id.
template <typename T>
void CheckForwardArgs(const ParamLayout& layout, const PackedBatch& batch, int64_t first_layer,
                      const T* x_in, int64_t boundary_layer, const T* boundary_out) {
  const int64_t num_layers = layout.num_layers();
  NEODB_CHECK(first_layer >= 0 && first_layer <= num_layers);
  NEODB_CHECK(first_layer == 0 || x_in != nullptr);
  NEODB_CHECK(boundary_out == nullptr ||
              (boundary_layer >= first_layer && boundary_layer <= num_layers));
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    NEODB_CHECK(batch.length(b) >= 1 && batch.length(b) <= layout.max_length());
  }
  if (first_layer == 0) {
    for (int32_t id : batch.ids) NEODB_CHECK(id >= 0 && id < layout.vocab_size());
  }
}

// The lowest layer whose parameters train when gradients start at
// grad_begin, for BackwardFromHidden; CHECKs that grad_begin is 0 or where a
// layer (or what follows the last: ParamLayout::LayerBegin) starts, and that
// the forward pass, which started at `first_layer`, kept that layer.
inline int64_t LowestTrainedLayer(const ParamLayout& layout, int64_t grad_begin,
                                  int64_t first_layer) {
  const int64_t num_layers = layout.num_layers();
  int64_t l = 0;
  while (l < num_layers && layout.LayerBegin(l) < grad_begin) ++l;
  NEODB_CHECK(grad_begin == 0 || grad_begin == layout.LayerBegin(l));
  NEODB_CHECK(first_layer <= l);
  NEODB_CHECK(grad_begin > 0 || first_layer == 0);
  return l;
}

// `layer(l, in, acts, keep, out)` runs layer l. `acts` (may be null: no-grad
// mode) gets first_layer = first and the activations of layers [first,
// last). On return `x` holds the output of layer last - 1. boundary_out (may
// be null) gets the state entering boundary_layer, first <= boundary_layer
// <= last.
template <typename T, typename LayerActs, typename Layer>
void RunLayerStack(int64_t first, int64_t last, std::vector<T>* x, LayerStackActs<LayerActs>* acts,
                   int64_t boundary_layer, T* boundary_out, Layer&& layer) {
  std::vector<T> next(x->size());
  LayerActs scratch;
  if (acts != nullptr) {
    acts->first_layer = first;
    acts->layers.clear();
    acts->layers.resize(static_cast<size_t>(last - first));
  }
  for (int64_t l = first; l < last; ++l) {
    if (boundary_out != nullptr && boundary_layer == l) std::copy(x->begin(), x->end(), boundary_out);
    LayerActs* layer_acts = acts != nullptr ? &acts->layers[l - first] : &scratch;
    layer(l, x->data(), layer_acts, acts != nullptr, next.data());
    x->swap(next);
  }
  if (boundary_out != nullptr && boundary_layer == last) {
    std::copy(x->begin(), x->end(), boundary_out);
  }
}

}  // namespace neodb::encoder::train
