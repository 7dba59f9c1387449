#pragma once
// Bidirectional multi-head attention over a packed batch:
// out[t, D·h + d] = Σ_j softmax_j(q_h[t] · k_h[j] · scale) · v_h[j, d], with t
// and j ranging over the tokens of one sequence (sequences never see each
// other; there is no padding to mask).
//
// The CPU body runs per sequence per head as two SGEMMs, blocked over query
// rows: scores for at most `ScoreRows(T)` rows × T keys live in the scratch
// buffer at a time, so memory stays O(rows·T) even at T = 4096 and the block
// stays cache-resident between the softmax and the second GEMM.

#include <cstdint>
#include <vector>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// Query rows per score block for a sequence of length `len` (≥ 1).
int64_t AttentionScoreRows(int64_t len);
// Scratch floats the attention needs for sequences up to `max_len`.
int64_t AttentionScratchSize(int64_t max_len);
// The longest of `batch` packed sequences (offsets as in PackedBatch).
int64_t LongestSequence(const int64_t* offsets, int64_t batch);

// REQUIRES: q, k, v F32 [H, N, D]; out F32 [N, H·D]; scratch F32 with at least
// AttentionScratchSize(longest sequence) elements; offsets as in PackedBatch.
// The (sequence, head) pairs run on as many GEMM threads (ops/parallel_cpu.h)
// as the scratch holds such slices for: one slice, one thread.
void Attention(const Tensor& q, const Tensor& k, const Tensor& v,
               const std::vector<int64_t>& offsets, float scale, Tensor* scratch, Tensor* out);

namespace cpu {
void Attention(const float* q, const float* k, const float* v, const int64_t* offsets,
               int64_t batch, int64_t num_heads, int64_t head_dim, float scale, float* scratch,
               int64_t scratch_size, float* out);

// The same with BF16 matmuls (reduced precisions): q (already multiplied by
// the scale), k and v in BF16, scores · kᵀ and the exp-scores · v with F32
// accumulation; scores, softmax, row sums and out stay F32, and the
// unnormalised probabilities (≤ 1) are rounded to BF16 for P·V.
// `probs` has as many elements as `scratch` (`scratch_size`).
// REQUIRES: the host runs BF16 (CpuPrecisionFor).
void AttentionBf16(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                   const int64_t* offsets, int64_t batch, int64_t num_heads, int64_t head_dim,
                   float* scratch, uint16_t* probs, int64_t scratch_size, float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
