#pragma once
// What an architecture's training pass (tape_ops.h's DescribedTrainModel)
// checks and reuses around its description: the checks of Forward's and
// BackwardFromHidden's arguments and the activations a Forward fills in.

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status_macros.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

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

}  // namespace neodb::encoder::train
