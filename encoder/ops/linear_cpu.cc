#include <cblas.h>

#include "encoder/ops/linear.h"

namespace neodb::encoder::ops::cpu {

void Linear(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t n, int64_t m,
            int64_t k, bool accumulate, float* out, int64_t ldo) {
  if (n == 0 || m == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(m),
              static_cast<int>(k), 1.0f, x, static_cast<int>(ldx), w, static_cast<int>(ldw),
              accumulate ? 1.0f : 0.0f, out, static_cast<int>(ldo));
}

}  // namespace neodb::encoder::ops::cpu
