#pragma once
// The loop both architectures' training forwards run over their layers
// (bert_train_model.cc, neobert_train_model.cc): layers [first, last) over the
// hidden state `x`, keeping each layer's activations for the backward pass or
// one layer of scratch, and a copy of the hidden state entering
// `boundary_layer` (the input a frozen bottom's cache holds); and the two
// buffer helpers their activation code uses.

#include <algorithm>
#include <cstdint>
#include <vector>

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

// `layer(l, in, acts, keep, out)` runs layer l. `kept` (may be null: no-grad
// mode) is resized to last - first. On return `x` holds the output of layer
// last - 1. boundary_out (may be null) gets the state entering boundary_layer,
// first <= boundary_layer <= last.
template <typename T, typename LayerActs, typename Layer>
void RunLayerStack(int64_t first, int64_t last, std::vector<T>* x, std::vector<LayerActs>* kept,
                   int64_t boundary_layer, T* boundary_out, Layer&& layer) {
  std::vector<T> next(x->size());
  LayerActs scratch;
  if (kept != nullptr) {
    kept->clear();
    kept->resize(static_cast<size_t>(last - first));
  }
  for (int64_t l = first; l < last; ++l) {
    if (boundary_out != nullptr && boundary_layer == l) std::copy(x->begin(), x->end(), boundary_out);
    LayerActs* acts = kept != nullptr ? &(*kept)[l - first] : &scratch;
    layer(l, x->data(), acts, kept != nullptr, next.data());
    x->swap(next);
  }
  if (boundary_out != nullptr && boundary_layer == last) {
    std::copy(x->begin(), x->end(), boundary_out);
  }
}

}  // namespace neodb::encoder::train
