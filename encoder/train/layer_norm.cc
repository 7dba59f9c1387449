#include "encoder/train/layer_norm.h"

#include <cmath>

namespace neodb::encoder::train {

template <typename T>
void LayerNormForward(const T* x, const T* w, const T* b, int64_t rows, int64_t cols, double eps,
                      T* y, T* mean, T* rstd) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += xr[c];
    const double mu = sum / static_cast<double>(cols);
    double sq = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = xr[c] - mu;
      sq += d * d;
    }
    const double rs = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = static_cast<T>((xr[c] - mu) * rs * w[c] + b[c]);
    }
    if (mean != nullptr) mean[r] = static_cast<T>(mu);
    if (rstd != nullptr) rstd[r] = static_cast<T>(rs);
  }
}

// With x̂ = (x − mean)·rstd and g = dy ⊙ w:
//   dx = rstd · (g − mean(g) − x̂ · mean(g ⊙ x̂)),  dw += dy ⊙ x̂,  db += dy.
template <typename T>
void LayerNormBackward(const T* x, const T* w, const T* mean, const T* rstd, const T* dy,
                       int64_t rows, int64_t cols, T* dx, T* dw, T* db) {
  const double inv_n = 1.0 / static_cast<double>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    const double mu = mean[r];
    const double rs = rstd[r];
    double sum_g = 0, sum_gx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double xh = (xr[c] - mu) * rs;
      const double g = static_cast<double>(dyr[c]) * w[c];
      sum_g += g;
      sum_gx += g * xh;
      if (dw != nullptr) dw[c] += static_cast<T>(dyr[c] * xh);
      if (db != nullptr) db[c] += dyr[c];
    }
    if (dx == nullptr) continue;
    const double mg = sum_g * inv_n, mgx = sum_gx * inv_n;
    T* dxr = dx + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double xh = (xr[c] - mu) * rs;
      const double g = static_cast<double>(dyr[c]) * w[c];
      dxr[c] += static_cast<T>(rs * (g - mg - xh * mgx));
    }
  }
}

#define NEODB_INSTANTIATE(T)                                                                   \
  template void LayerNormForward<T>(const T*, const T*, const T*, int64_t, int64_t, double, T*, \
                                    T*, T*);                                                   \
  template void LayerNormBackward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, \
                                     int64_t, T*, T*, T*);
NEODB_INSTANTIATE(float)
NEODB_INSTANTIATE(double)
#undef NEODB_INSTANTIATE

}  // namespace neodb::encoder::train
