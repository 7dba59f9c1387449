#include <algorithm>

#include "encoder/ops/attention.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/vec_math_cpu.h"

namespace neodb::encoder::ops::cpu {

void Attention(const float* q, const float* k, const float* v, const int64_t* offsets,
               int64_t batch, int64_t num_heads, int64_t head_dim, float scale, float* scratch,
               float* out) {
  const int64_t n = offsets[batch];
  const int64_t width = num_heads * head_dim;
  const int d = static_cast<int>(head_dim);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = offsets[b];
    const int64_t len = offsets[b + 1] - base;
    if (len == 0) continue;
    const int64_t block = AttentionScoreRows(len);
    const int t = static_cast<int>(len);
    float* sums = scratch + block * len;  // [block] after the score block
    for (int64_t h = 0; h < num_heads; ++h) {
      const float* qh = q + (h * n + base) * head_dim;
      const float* kh = k + (h * n + base) * head_dim;
      const float* vh = v + (h * n + base) * head_dim;
      for (int64_t r0 = 0; r0 < len; r0 += block) {
        const int rows = static_cast<int>(std::min(block, len - r0));
        // scores[rows, T] = scale · q[r0:r0+rows] · kᵀ
        Sgemm(/*trans_b=*/true, rows, t, d, scale, qh + r0 * head_dim, d, kh, d, 0.0f, scratch, t);
        // Unnormalised softmax: exp(s − max) per row, row sums kept aside.
        for (int i = 0; i < rows; ++i) {
          sums[i] = ExpShiftRowInplace(scratch + int64_t{i} * len, len);
        }
        // out[r0:r0+rows, h·D : h·D+D] = exp-scores · v, then ÷ row sum (D
        // divisions per row instead of T multiplications).
        float* o = out + (base + r0) * width + h * head_dim;
        Sgemm(/*trans_b=*/false, rows, d, t, 1.0f, scratch, t, vh, d, 0.0f, o, width);
        for (int i = 0; i < rows; ++i) {
          const float inv = 1.0f / sums[i];
          float* row = o + int64_t{i} * width;
          for (int e = 0; e < d; ++e) row[e] *= inv;
        }
      }
    }
  }
}

void AttentionBf16(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                   const int64_t* offsets, int64_t batch, int64_t num_heads, int64_t head_dim,
                   float* scratch, uint16_t* probs, float* out) {
  const int64_t n = offsets[batch];
  const int64_t width = num_heads * head_dim;
  const int64_t d = head_dim;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = offsets[b];
    const int64_t len = offsets[b + 1] - base;
    if (len == 0) continue;
    const int64_t block = AttentionScoreRows(len);
    float* sums = scratch + block * len;
    for (int64_t h = 0; h < num_heads; ++h) {
      const uint16_t* qh = q + (h * n + base) * head_dim;
      const uint16_t* kh = k + (h * n + base) * head_dim;
      const uint16_t* vh = v + (h * n + base) * head_dim;
      for (int64_t r0 = 0; r0 < len; r0 += block) {
        const int64_t rows = std::min(block, len - r0);
        GemmBf16(/*trans_b=*/true, rows, len, d, qh + r0 * d, d, kh, d, /*accumulate=*/false,
                 scratch, len);
        for (int64_t i = 0; i < rows; ++i) {
          sums[i] = ExpShiftRowToBf16(scratch + i * len, len, probs + i * len);
        }
        float* o = out + (base + r0) * width + h * head_dim;
        GemmBf16(/*trans_b=*/false, rows, d, len, probs, len, vh, d, /*accumulate=*/false, o,
                 width);
        for (int64_t i = 0; i < rows; ++i) {
          const float inv = 1.0f / sums[i];
          float* row = o + i * width;
          for (int64_t e = 0; e < d; ++e) row[e] *= inv;
        }
      }
    }
  }
}

}  // namespace neodb::encoder::ops::cpu
