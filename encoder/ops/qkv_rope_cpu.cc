#include <cstring>

#include "encoder/ops/qkv_rope.h"

namespace neodb::encoder::ops::cpu {
namespace {

inline void Rotate(const float* src, const float* cos, const float* sin, int64_t half, float* dst) {
  for (int64_t i = 0; i < half; ++i) {
    const float x0 = src[2 * i];
    const float x1 = src[2 * i + 1];
    dst[2 * i] = x0 * cos[i] - x1 * sin[i];
    dst[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
  }
}

}  // namespace

void SplitQkvRope(const float* qkv, const int64_t* offsets, int64_t batch, int64_t num_heads,
                  int64_t head_dim, const float* cos, const float* sin, float* q, float* k,
                  float* v, int64_t begin, int64_t end) {
  const int64_t n = offsets[batch];
  const int64_t half = head_dim / 2;
  const int64_t row_width = 3 * num_heads * head_dim;
  for (int64_t b = begin; b < end; ++b) {
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      const int64_t p = t - offsets[b];
      const float* c = cos + p * half;
      const float* s = sin + p * half;
      const float* row = qkv + t * row_width;
      for (int64_t h = 0; h < num_heads; ++h) {
        const float* src = row + h * 3 * head_dim;
        const int64_t dst = (h * n + t) * head_dim;
        Rotate(src, c, s, half, q + dst);
        Rotate(src + head_dim, c, s, half, k + dst);
        std::memcpy(v + dst, src + 2 * head_dim, static_cast<size_t>(head_dim) * sizeof(float));
      }
    }
  }
}

}  // namespace neodb::encoder::ops::cpu
