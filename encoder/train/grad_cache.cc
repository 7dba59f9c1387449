#include "encoder/train/grad_cache.h"

#include <algorithm>

#include "common/status_macros.h"

namespace neodb::encoder::train {

int64_t ContrastiveBatch::num_tokens() const {
  int64_t n = 0;
  for (int64_t t = 0; t < num_texts(); ++t) n += static_cast<int64_t>(text(t).size());
  return n;
}

const std::vector<int32_t>& ContrastiveBatch::text(int64_t t) const {
  const int64_t nq = static_cast<int64_t>(queries.size());
  if (t < nq) return queries[t];
  t -= nq;
  if (t < nq) return positives[t];
  return negatives[t - nq];
}

template <typename T>
InfoNceResult GradCacheStep(const TrainModel<T>& model, const T* params,
                            const ContrastiveBatch& batch, const GradCacheOptions& options,
                            T* grads) {
  NEODB_CHECK(!batch.queries.empty() && batch.queries.size() == batch.positives.size());
  NEODB_CHECK(options.chunk_size >= 1);
  const ParamLayout& layout = model.layout();
  const int64_t c = layout.hidden_size();
  const int64_t n = batch.num_texts();
  const int64_t b = static_cast<int64_t>(batch.queries.size());
  NEODB_CHECK(batch.excluded.empty() || static_cast<int64_t>(batch.excluded.size()) == b * (n - b));
  const int64_t first_trained = layout.FirstTrainedLayer(options.train_layers);
  const int64_t grad_begin = layout.TrainableBegin(options.train_layers);

  std::vector<PackedBatch> chunks;
  for (int64_t start = 0; start < n; start += options.chunk_size) {
    PackedBatch chunk;
    chunk.offsets = {0};
    for (int64_t t = start; t < std::min(n, start + options.chunk_size); ++t) {
      AppendSequence(&chunk, batch.text(t));
    }
    chunks.push_back(std::move(chunk));
  }

  // 1. Embeddings of every text, no activations kept; the frozen bottom's
  // output is cached so that pass 3 starts from it.
  std::vector<T> emb(static_cast<size_t>(n * c));
  std::vector<std::vector<T>> boundary(chunks.size());
  for (size_t k = 0; k < chunks.size(); ++k) {
    T* boundary_out = nullptr;
    if (first_trained > 0) {
      boundary[k].resize(static_cast<size_t>(chunks[k].total_tokens() * c));
      boundary_out = boundary[k].data();
    }
    model.Forward(params, chunks[k], 0, nullptr, model.pooling(),
                  emb.data() + static_cast<int64_t>(k) * options.chunk_size * c, nullptr,
                  first_trained, boundary_out);
  }

  // 2. Loss and d loss / d embeddings.
  std::vector<T> d_emb(emb.size());
  const InfoNceResult result =
      InfoNce<T>(emb.data(), emb.data() + b * c, b, emb.data() + 2 * b * c, n - 2 * b, c,
                 options.temperature, d_emb.data(), d_emb.data() + b * c, d_emb.data() + 2 * b * c,
                 batch.excluded.empty() ? nullptr : batch.excluded.data());

  // 3. Recompute each chunk with activations and back-propagate its slice.
  std::vector<T> pooled;
  typename TrainModel<T>::Activations acts;
  for (size_t k = 0; k < chunks.size(); ++k) {
    pooled.resize(static_cast<size_t>(chunks[k].batch_size() * c));
    model.Forward(params, chunks[k], first_trained,
                  first_trained > 0 ? boundary[k].data() : nullptr, model.pooling(), pooled.data(),
                  &acts);
    model.Backward(params, chunks[k], acts,
                   d_emb.data() + static_cast<int64_t>(k) * options.chunk_size * c, grad_begin,
                   grads);
  }
  return result;
}

template InfoNceResult GradCacheStep<float>(const TrainModel<float>&, const float*,
                                            const ContrastiveBatch&, const GradCacheOptions&,
                                            float*);
template InfoNceResult GradCacheStep<double>(const TrainModel<double>&, const double*,
                                             const ContrastiveBatch&, const GradCacheOptions&,
                                             double*);

}  // namespace neodb::encoder::train
