#include <cstring>

#include "encoder/ops/embedding.h"

namespace neodb::encoder::ops::cpu {

void Embedding(const float* table, int64_t cols, const int32_t* ids, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out + i * cols, table + static_cast<int64_t>(ids[i]) * cols,
                static_cast<size_t>(cols) * sizeof(float));
  }
}

}  // namespace neodb::encoder::ops::cpu
