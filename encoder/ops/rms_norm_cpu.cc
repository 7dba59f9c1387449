#include <cmath>

#include "encoder/ops/rms_norm.h"

namespace neodb::encoder::ops::cpu {

void RmsNorm(const float* x, const float* weight, float eps, int64_t rows, int64_t cols,
             float* out) {
  constexpr int kLanes = 16;  // independent partial sums: lets the compiler vectorise
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = out + r * cols;
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= cols; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) acc[j] += xr[i + j] * xr[i + j];
    }
    float sum = 0.0f;
    for (; i < cols; ++i) sum += xr[i] * xr[i];
    for (int j = 0; j < kLanes; ++j) sum += acc[j];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * scale * weight[c];
  }
}

}  // namespace neodb::encoder::ops::cpu
