#pragma once
// Splits the fused QKV projection into head-major Q, K, V and applies RoPE to
// Q and K in the same pass (NEOBERT.md §3).
//
// Input row t of `qkv` is [3C] in the checkpoint's head-interleaved order:
// head h owns columns [3Dh, 3Dh+D) = q, [3Dh+D, 3Dh+2D) = k,
// [3Dh+2D, 3Dh+3D) = v. We keep the stored weight layout (no row permutation
// at load) and gather here, since this pass reads every element anyway.
// Outputs are head-major [H, N, D] so that a head of one sequence is one
// contiguous [T, D] block for the attention GEMMs.
//
// RoPE, LLaMA convention: for pair i (elements 2i, 2i+1) at position p,
// angle = float(p) · inv_freq[i] computed in F32, inv_freq[i] =
// float(1 / theta^(float(2i)/float(D))) (the power in double, rounded once);
// cos/sin of the F32 angle are evaluated in double and rounded to F32.
// x'[2i] = x[2i]·cos − x[2i+1]·sin, x'[2i+1] = x[2i]·sin + x[2i+1]·cos.
// Positions restart at 0 for every sequence of the packed batch.

#include <cstdint>
#include <vector>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// Precomputed cos/sin, each F32 [max_positions, D/2].
struct RopeTable {
  Tensor cos;
  Tensor sin;
  int64_t max_positions() const { return cos.dim(0); }
  int64_t head_dim() const { return cos.dim(1) * 2; }
};

// REQUIRES: head_dim even and > 0, max_positions > 0.
RopeTable MakeRopeTable(int64_t max_positions, int64_t head_dim, double theta);

// REQUIRES: qkv F32 [N, 3·H·D]; q, k, v F32 [H, N, D]; offsets as in
// PackedBatch (offsets.back() == N, every length ≤ rope.max_positions()).
void SplitQkvRope(const Tensor& qkv, const std::vector<int64_t>& offsets, int64_t num_heads,
                  const RopeTable& rope, Tensor* q, Tensor* k, Tensor* v);

namespace cpu {
// Sequences [begin, end) of the `batch`.
void SplitQkvRope(const float* qkv, const int64_t* offsets, int64_t batch, int64_t num_heads,
                  int64_t head_dim, const float* cos, const float* sin, float* q, float* k,
                  float* v, int64_t begin, int64_t end);
}  // namespace cpu

}  // namespace neodb::encoder::ops
