#include <algorithm>

#include "encoder/ops/attention.h"
#include "encoder/ops/gemm_cpu.h"
#include "encoder/ops/parallel_cpu.h"
#include "encoder/ops/vec_math_cpu.h"

namespace neodb::encoder::ops::cpu {
namespace {

// Runs head(b, h, worker) for every sequence b and head h, on as many threads
// as `scratch_size` floats hold AttentionScratchSize(longest) slices for
// (each worker owns slice `worker`): one (sequence, head) is the unit, its
// two matmuls and softmax the same as on one thread.
template <typename Head>
void ForEachHead(const int64_t* offsets, int64_t batch, int64_t num_heads, int64_t scratch_size,
                 const Head& head) {
  const int64_t slice = AttentionScratchSize(std::max<int64_t>(LongestSequence(offsets, batch), 1));
  const int workers = static_cast<int>(std::max<int64_t>(1, scratch_size / slice));
  ParallelFor(batch * num_heads, 1, workers, [&](int64_t begin, int64_t end, int worker) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / num_heads;
      if (offsets[b + 1] == offsets[b]) continue;
      head(b, i % num_heads, worker * slice);
    }
  });
}

}  // namespace

void Attention(const float* q, const float* k, const float* v, const int64_t* offsets,
               int64_t batch, int64_t num_heads, int64_t head_dim, float scale, float* scratch,
               int64_t scratch_size, float* out) {
  const int64_t n = offsets[batch];
  const int64_t width = num_heads * head_dim;
  const int d = static_cast<int>(head_dim);
  ForEachHead(offsets, batch, num_heads, scratch_size, [&](int64_t b, int64_t h, int64_t at) {
    const int64_t base = offsets[b];
    const int64_t len = offsets[b + 1] - base;
    const int64_t block = AttentionScoreRows(len);
    const int t = static_cast<int>(len);
    float* scores = scratch + at;
    float* sums = scores + block * len;  // [block] after the score block
    const float* qh = q + (h * n + base) * head_dim;
    const float* kh = k + (h * n + base) * head_dim;
    const float* vh = v + (h * n + base) * head_dim;
    for (int64_t r0 = 0; r0 < len; r0 += block) {
      const int rows = static_cast<int>(std::min(block, len - r0));
      // scores[rows, T] = scale · q[r0:r0+rows] · kᵀ
      Sgemm(/*trans_b=*/true, rows, t, d, scale, qh + r0 * head_dim, d, kh, d, 0.0f, scores, t);
      // Unnormalised softmax: exp(s − max) per row, row sums kept aside.
      for (int i = 0; i < rows; ++i) {
        sums[i] = ExpShiftRowInplace(scores + int64_t{i} * len, len);
      }
      // out[r0:r0+rows, h·D : h·D+D] = exp-scores · v, then ÷ row sum (D
      // divisions per row instead of T multiplications).
      float* o = out + (base + r0) * width + h * head_dim;
      Sgemm(/*trans_b=*/false, rows, d, t, 1.0f, scores, t, vh, d, 0.0f, o, width);
      for (int i = 0; i < rows; ++i) {
        const float inv = 1.0f / sums[i];
        float* row = o + int64_t{i} * width;
        for (int e = 0; e < d; ++e) row[e] *= inv;
      }
    }
  });
}

void AttentionBf16(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                   const int64_t* offsets, int64_t batch, int64_t num_heads, int64_t head_dim,
                   float* scratch, uint16_t* probs, int64_t scratch_size, float* out) {
  const int64_t n = offsets[batch];
  const int64_t width = num_heads * head_dim;
  const int64_t d = head_dim;
  ForEachHead(offsets, batch, num_heads, scratch_size, [&](int64_t b, int64_t h, int64_t at) {
    const int64_t base = offsets[b];
    const int64_t len = offsets[b + 1] - base;
    const int64_t block = AttentionScoreRows(len);
    float* scores = scratch + at;
    uint16_t* p = probs + at;
    float* sums = scores + block * len;
    const uint16_t* qh = q + (h * n + base) * head_dim;
    const uint16_t* kh = k + (h * n + base) * head_dim;
    const uint16_t* vh = v + (h * n + base) * head_dim;
    for (int64_t r0 = 0; r0 < len; r0 += block) {
      const int64_t rows = std::min(block, len - r0);
      GemmBf16(/*trans_b=*/true, rows, len, d, qh + r0 * d, d, kh, d, /*accumulate=*/false,
               scores, len);
      for (int64_t i = 0; i < rows; ++i) {
        sums[i] = ExpShiftRowToBf16(scores + i * len, len, p + i * len);
      }
      float* o = out + (base + r0) * width + h * head_dim;
      GemmBf16(/*trans_b=*/false, rows, d, len, p, len, vh, d, /*accumulate=*/false, o, width);
      for (int64_t i = 0; i < rows; ++i) {
        const float inv = 1.0f / sums[i];
        float* row = o + i * width;
        for (int64_t e = 0; e < d; ++e) row[e] *= inv;
      }
    }
  });
}

}  // namespace neodb::encoder::ops::cpu
