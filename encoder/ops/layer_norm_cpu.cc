#include <cmath>

#include "encoder/ops/layer_norm.h"

namespace neodb::encoder::ops::cpu {

void LayerNorm(const float* x, const float* bias, const float* gamma, const float* beta, float eps,
               int64_t rows, int64_t cols, float* out) {
  const float inv_cols = 1.0f / static_cast<float>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    // y = x + bias, written to out first (out may alias x: each element is
    // read before it is written).
    float sum = 0.0f;
    if (bias != nullptr) {
      for (int64_t c = 0; c < cols; ++c) {
        yr[c] = xr[c] + bias[c];
        sum += yr[c];
      }
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        yr[c] = xr[c];
        sum += yr[c];
      }
    }
    const float mean = sum * inv_cols;
    float squares = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float d = yr[c] - mean;
      squares += d * d;
    }
    const float rstd = 1.0f / std::sqrt(squares * inv_cols + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = (yr[c] - mean) * rstd * gamma[c] + beta[c];
  }
}

}  // namespace neodb::encoder::ops::cpu
