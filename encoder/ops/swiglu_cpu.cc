#include "encoder/ops/swiglu.h"
#include "encoder/ops/vec_math_cpu.h"

namespace neodb::encoder::ops::cpu {

void SwiGlu(const float* u, int64_t rows, int64_t ffn_dim, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = u + r * 2 * ffn_dim;
    SiluMul(row, row + ffn_dim, out + r * ffn_dim, ffn_dim);
  }
}

}  // namespace neodb::encoder::ops::cpu
