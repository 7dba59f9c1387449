#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/linear.h"

namespace neodb::encoder::ops::cpu {

void Linear(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t n, int64_t m,
            int64_t k, bool accumulate, float* out, int64_t ldo) {
  if (n == 0 || m == 0) return;
  Sgemm(/*trans_b=*/true, n, m, k, 1.0f, x, ldx, w, ldw, accumulate ? 1.0f : 0.0f, out, ldo);
}

}  // namespace neodb::encoder::ops::cpu
