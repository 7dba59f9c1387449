#include "encoder/ops/position_embedding.h"

namespace neodb::encoder::ops::cpu {

void AddPositionEmbedding(const float* table, int64_t cols, const int64_t* offsets,
                          int64_t batch, float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = offsets[b]; t < offsets[b + 1]; ++t) {
      const float* pos = table + (t - offsets[b]) * cols;
      float* row = out + t * cols;
      for (int64_t c = 0; c < cols; ++c) row[c] += pos[c];
    }
  }
}

}  // namespace neodb::encoder::ops::cpu
