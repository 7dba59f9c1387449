#include "encoder/train/embedding_pooling.h"

#include <algorithm>

#include "common/status_macros.h"

namespace neodb::encoder::train {

template <typename T>
void EmbeddingForward(const int32_t* ids, int64_t rows, const T* table, int64_t dim, T* x) {
  for (int64_t t = 0; t < rows; ++t) {
    std::copy(table + static_cast<int64_t>(ids[t]) * dim,
              table + static_cast<int64_t>(ids[t] + 1) * dim, x + t * dim);
  }
}

template <typename T>
void EmbeddingBackward(const int32_t* ids, int64_t rows, const T* dx, int64_t dim, T* d_table) {
  for (int64_t t = 0; t < rows; ++t) {
    T* dst = d_table + static_cast<int64_t>(ids[t]) * dim;
    const T* src = dx + t * dim;
    for (int64_t c = 0; c < dim; ++c) dst[c] += src[c];
  }
}

template <typename T>
void MeanPoolForward(const T* h, const int64_t* offsets, int64_t batch, int64_t dim, T* pooled) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = offsets[b + 1] - offsets[b];
    NEODB_CHECK(len > 0);
    T* out = pooled + b * dim;
    std::fill(out, out + dim, T(0));
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      for (int64_t c = 0; c < dim; ++c) out[c] += h[t * dim + c];
    }
    const T inv = T(1) / static_cast<T>(len);
    for (int64_t c = 0; c < dim; ++c) out[c] *= inv;
  }
}

template <typename T>
void MeanPoolBackward(const T* d_pooled, const int64_t* offsets, int64_t batch, int64_t dim,
                      T* dh) {
  for (int64_t b = 0; b < batch; ++b) {
    const T inv = T(1) / static_cast<T>(offsets[b + 1] - offsets[b]);
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      for (int64_t c = 0; c < dim; ++c) dh[t * dim + c] += d_pooled[b * dim + c] * inv;
    }
  }
}

template <typename T>
void ClsPoolForward(const T* h, const int64_t* offsets, int64_t batch, int64_t dim, T* pooled) {
  for (int64_t b = 0; b < batch; ++b) {
    std::copy(h + offsets[b] * dim, h + (offsets[b] + 1) * dim, pooled + b * dim);
  }
}

template <typename T>
void ClsPoolBackward(const T* d_pooled, const int64_t* offsets, int64_t batch, int64_t dim, T* dh) {
  for (int64_t b = 0; b < batch; ++b) {
    T* dst = dh + offsets[b] * dim;
    for (int64_t c = 0; c < dim; ++c) dst[c] += d_pooled[b * dim + c];
  }
}

template <typename T>
void PositionEmbeddingForward(const T* table, const int64_t* offsets, int64_t batch, int64_t dim,
                              T* x) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      const T* row = table + (t - offsets[b]) * dim;
      for (int64_t c = 0; c < dim; ++c) x[t * dim + c] += row[c];
    }
  }
}

template <typename T>
void PositionEmbeddingBackward(const T* dx, const int64_t* offsets, int64_t batch, int64_t dim,
                               T* d_table) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      T* row = d_table + (t - offsets[b]) * dim;
      for (int64_t c = 0; c < dim; ++c) row[c] += dx[t * dim + c];
    }
  }
}

#define NEODB_INSTANTIATE(T)                                                          \
  template void EmbeddingForward<T>(const int32_t*, int64_t, const T*, int64_t, T*);  \
  template void EmbeddingBackward<T>(const int32_t*, int64_t, const T*, int64_t, T*); \
  template void MeanPoolForward<T>(const T*, const int64_t*, int64_t, int64_t, T*);   \
  template void MeanPoolBackward<T>(const T*, const int64_t*, int64_t, int64_t, T*);  \
  template void ClsPoolForward<T>(const T*, const int64_t*, int64_t, int64_t, T*);   \
  template void ClsPoolBackward<T>(const T*, const int64_t*, int64_t, int64_t, T*);  \
  template void PositionEmbeddingForward<T>(const T*, const int64_t*, int64_t, int64_t, T*); \
  template void PositionEmbeddingBackward<T>(const T*, const int64_t*, int64_t, int64_t, T*);
NEODB_INSTANTIATE(float)
NEODB_INSTANTIATE(double)
#undef NEODB_INSTANTIATE

}  // namespace neodb::encoder::train
