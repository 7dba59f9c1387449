#pragma once
// An independent CPU F32 NeoBERT forward pass (OpenBLAS GEMMs, naive
// attention) written straight from NEOBERT.md §3, used as ground truth by the
// CUDA tests. Deliberately simple: no packing tricks, no fused ops.
// When the forward room's CPU backend is in main, the tests can check it
// against this too.

#include <cstdint>
#include <vector>

#include "encoder/backend.h"
#include "encoder/checkpoint/weights.h"

namespace neodb::encoder::testing {

// last_hidden_state, F32 [total_tokens, C].
std::vector<float> ReferenceHidden(const NeoBertWeights& w, const PackedBatch& batch);

// CLS row or mean of each sequence's rows: F32 [batch, C].
std::vector<float> ReferencePool(const std::vector<float>& hidden, int64_t cols,
                                 const PackedBatch& batch, Pooling pooling);

// softmax(q·kᵀ·scale)·v per sequence and head, in double; q, k, v, result
// [tokens, heads, 64] F32.
std::vector<float> ReferenceAttention(const std::vector<float>& q, const std::vector<float>& k,
                                      const std::vector<float>& v,
                                      const std::vector<int32_t>& cu_seqlens, int heads,
                                      float scale);

// RoPE angle for position p and pair i (F32, as the reference model).
void RopeCosSin(int32_t p, int i, float theta, float* cos_out, float* sin_out);

}  // namespace neodb::encoder::testing
