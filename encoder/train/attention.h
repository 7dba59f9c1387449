#pragma once
// Bidirectional softmax attention over a packed batch, reading the fused,
// head-interleaved QKV projection in place (NEOBERT.md §3): for head h,
// q = row[3Dh .. 3Dh+D), k = the next D, v = the next D. Each sequence of the
// batch attends only to itself (no padding exists in a packed batch).

#include <cstdint>

namespace neodb::encoder::train {

// qkv [rows, 3·H·D] (RoPE already applied to q and k); offsets[0..batch] delimit
// the sequences (offsets[batch] == rows). Writes o [rows, H·D], heads
// concatenated in head order, and, when lse != nullptr, lse [rows, H] = the
// log-sum-exp of each softmax row (so the backward pass recomputes the
// probabilities instead of storing T² values per head).
template <typename T>
void AttentionForward(const T* qkv, const int64_t* offsets, int64_t batch, int64_t heads,
                      int64_t head_dim, T* o, T* lse);

// Given dO [rows, H·D], writes (overwrites) dqkv [rows, 3·H·D] in the same
// interleaved layout: the gradients w.r.t. the (rotated) q, k and v.
template <typename T>
void AttentionBackward(const T* qkv, const T* o, const T* lse, const T* d_o, const int64_t* offsets,
                       int64_t batch, int64_t heads, int64_t head_dim, T* dqkv);

}  // namespace neodb::encoder::train
