#include "encoder/ops/split_qkv.h"

namespace neodb::encoder::ops::cpu {

void SplitQkv(const float* qkv, const float* bias, int64_t tokens, int64_t num_heads,
              int64_t head_dim, float* q, float* k, float* v, int64_t begin, int64_t end) {
  const int64_t c = num_heads * head_dim;
  float* const outs[3] = {q, k, v};
  for (int64_t t = begin; t < end; ++t) {
    const float* row = qkv + t * 3 * c;
    for (int part = 0; part < 3; ++part) {
      for (int64_t h = 0; h < num_heads; ++h) {
        const float* src = row + part * c + h * head_dim;
        const float* b = bias + part * c + h * head_dim;
        float* dst = outs[part] + (h * tokens + t) * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) dst[d] = src[d] + b[d];
      }
    }
  }
}

}  // namespace neodb::encoder::ops::cpu
