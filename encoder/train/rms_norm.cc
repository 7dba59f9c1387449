#include "encoder/train/rms_norm.h"

#include <cmath>

namespace neodb::encoder::train {

template <typename T>
void RmsNormForward(const T* x, const T* w, int64_t rows, int64_t cols, double eps, T* y, T* rstd) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += static_cast<double>(xr[c]) * xr[c];
    const T inv = static_cast<T>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * w[c];
    if (rstd != nullptr) rstd[r] = inv;
  }
}

// r = rstd, g = dy ⊙ w:  dx = r·g − x · r³ · (Σ g⊙x) / n;  dw += dy ⊙ x · r.
template <typename T>
void RmsNormBackward(const T* x, const T* w, const T* rstd, const T* dy, int64_t rows, int64_t cols,
                     T* dx, T* dw) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    const T inv = rstd[r];
    if (dw != nullptr) {
      for (int64_t c = 0; c < cols; ++c) dw[c] += dyr[c] * xr[c] * inv;
    }
    if (dx != nullptr) {
      double dot = 0;
      for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(dyr[c]) * w[c] * xr[c];
      const T coef = static_cast<T>(dot / static_cast<double>(cols)) * inv * inv * inv;
      T* dxr = dx + r * cols;
      for (int64_t c = 0; c < cols; ++c) dxr[c] += inv * dyr[c] * w[c] - xr[c] * coef;
    }
  }
}

template void RmsNormForward<float>(const float*, const float*, int64_t, int64_t, double, float*,
                                    float*);
template void RmsNormForward<double>(const double*, const double*, int64_t, int64_t, double,
                                     double*, double*);
template void RmsNormBackward<float>(const float*, const float*, const float*, const float*,
                                     int64_t, int64_t, float*, float*);
template void RmsNormBackward<double>(const double*, const double*, const double*, const double*,
                                      int64_t, int64_t, double*, double*);

}  // namespace neodb::encoder::train
