#pragma once
// Gradient caching for the contrastive loss (Gao et al., 2021, "GradCache"):
// the contrastive batch size is not bounded by activation memory.
//  1. Embed every text of the batch in chunks WITHOUT keeping activations
//     (when only the top layers train, keep the hidden state entering the
//     first trained layer: the frozen bottom then runs once per text).
//  2. Compute the InfoNCE loss and its gradient w.r.t. the embeddings.
//  3. Per chunk, re-run the forward pass of the trained layers with
//     activations and back-propagate that chunk's embedding gradients,
//     accumulating parameter gradients.
// The result equals the gradient of the full-batch loss (up to rounding).

#include <cstdint>
#include <vector>

#include "encoder/train/info_nce.h"
#include "encoder/train/train_model.h"

namespace neodb::encoder::train {

// One contrastive batch, tokenised and framed by [CLS]/[SEP].
struct ContrastiveBatch {
  std::vector<std::vector<int32_t>> queries;
  std::vector<std::vector<int32_t>> positives;  // positives[i] belongs to queries[i]
  std::vector<std::vector<int32_t>> negatives;  // every hard negative of the batch
  // Empty, or [B, B+M]: candidate j (positives ++ negatives) is a known
  // positive of query i, not a negative (see InfoNce and KnownPositives).
  std::vector<uint8_t> excluded;

  int64_t num_texts() const {
    return static_cast<int64_t>(queries.size() + positives.size() + negatives.size());
  }
  int64_t num_tokens() const;
  // Text t of the concatenation queries ++ positives ++ negatives.
  const std::vector<int32_t>& text(int64_t t) const;
};

struct GradCacheOptions {
  double temperature = 0.07;
  int64_t chunk_size = 8;    // sequences per forward pass with activations
  int64_t train_layers = 0;  // <= 0: everything trains (see ParamLayout)
};

// Computes the loss of `batch` and ADDS d loss / d params for the trained
// parameters (flat offsets >= layout.TrainableBegin(train_layers)) into
// `grads` (indexed from that offset). REQUIRES: queries.size() ==
// positives.size() >= 1, chunk_size >= 1.
template <typename T>
InfoNceResult GradCacheStep(const TrainModel<T>& model, const T* params,
                            const ContrastiveBatch& batch, const GradCacheOptions& options,
                            T* grads);

}  // namespace neodb::encoder::train
