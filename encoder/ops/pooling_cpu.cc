#include <cstring>

#include "encoder/ops/pooling.h"

namespace neodb::encoder::ops::cpu {

void Pool(const float* hidden, int64_t cols, const int64_t* offsets, int64_t batch, Pooling pooling,
          float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    float* dst = out + b * cols;
    const float* first = hidden + offsets[b] * cols;
    if (pooling == Pooling::kCls) {
      std::memcpy(dst, first, static_cast<size_t>(cols) * sizeof(float));
      continue;
    }
    const int64_t len = offsets[b + 1] - offsets[b];
    std::memcpy(dst, first, static_cast<size_t>(cols) * sizeof(float));
    for (int64_t t = 1; t < len; ++t) {
      const float* row = first + t * cols;
      for (int64_t c = 0; c < cols; ++c) dst[c] += row[c];
    }
    const float count = static_cast<float>(len);
    for (int64_t c = 0; c < cols; ++c) dst[c] /= count;
  }
}

}  // namespace neodb::encoder::ops::cpu
