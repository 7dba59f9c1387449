#include "encoder/train/swiglu.h"

#include <cmath>

namespace neodb::encoder::train {
namespace {

template <typename T>
T Sigmoid(T z) {
  return T(1) / (T(1) + std::exp(-z));
}

}  // namespace

template <typename T>
void SwiGluForward(const T* u, int64_t rows, int64_t ffn_dim, T* s) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* g = u + r * 2 * ffn_dim;
    const T* l = g + ffn_dim;
    T* sr = s + r * ffn_dim;
    for (int64_t j = 0; j < ffn_dim; ++j) sr[j] = g[j] * Sigmoid(g[j]) * l[j];
  }
}

// d/dg SiLU(g) = σ(g) · (1 + g · (1 − σ(g))).
template <typename T>
void SwiGluBackward(const T* u, const T* ds, int64_t rows, int64_t ffn_dim, T* du) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* g = u + r * 2 * ffn_dim;
    const T* l = g + ffn_dim;
    const T* dsr = ds + r * ffn_dim;
    T* dg = du + r * 2 * ffn_dim;
    T* dl = dg + ffn_dim;
    for (int64_t j = 0; j < ffn_dim; ++j) {
      const T sg = Sigmoid(g[j]);
      dl[j] = dsr[j] * g[j] * sg;
      dg[j] = dsr[j] * l[j] * sg * (T(1) + g[j] * (T(1) - sg));
    }
  }
}

template void SwiGluForward<float>(const float*, int64_t, int64_t, float*);
template void SwiGluForward<double>(const double*, int64_t, int64_t, double*);
template void SwiGluBackward<float>(const float*, const float*, int64_t, int64_t, float*);
template void SwiGluBackward<double>(const double*, const double*, int64_t, int64_t, double*);

}  // namespace neodb::encoder::train
