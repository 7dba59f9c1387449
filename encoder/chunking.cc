#include "encoder/chunking.h"

#include <algorithm>
#include <cmath>

namespace neodb::encoder {

int64_t FramedTexts::total_tokens() const {
  int64_t n = 0;
  for (const auto& s : sequences) n += static_cast<int64_t>(s.size());
  return n;
}

void NormalizeRow(float* v, int64_t n) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(v[i]) * v[i];
  if (ss == 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (int64_t i = 0; i < n; ++i) v[i] *= inv;
}

std::vector<Embedding> CombineChunks(const FramedTexts& framed, const float* pooled, int64_t dim,
                                     bool normalize) {
  const int64_t texts = framed.texts();
  std::vector<Embedding> result(texts);
  for (int64_t i = 0; i < texts; ++i) {
    const int64_t first = framed.first_sequence[i];
    const int64_t last = framed.first_sequence[i + 1];
    Embedding& e = result[i];
    e.vector.assign(dim, 0.0f);
    e.tokens = framed.sequences[first];
    e.num_chunks = static_cast<int>(last - first);
    e.num_tokens = 0;
    for (int64_t s = first; s < last; ++s) {
      e.num_tokens += static_cast<int>(framed.sequences[s].size());
    }
    if (e.num_chunks == 1) {
      const float* src = pooled + first * dim;
      std::copy(src, src + dim, e.vector.begin());
    } else {
      std::vector<double> acc(dim, 0.0);
      for (int64_t s = first; s < last; ++s) {
        const double w = static_cast<double>(framed.sequences[s].size()) / e.num_tokens;
        const float* src = pooled + s * dim;
        for (int64_t c = 0; c < dim; ++c) acc[c] += w * src[c];
      }
      for (int64_t c = 0; c < dim; ++c) e.vector[c] = static_cast<float>(acc[c]);
    }
    if (normalize) NormalizeRow(e.vector.data(), dim);
  }
  return result;
}

}  // namespace neodb::encoder
