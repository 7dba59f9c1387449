#pragma once
// Embedding lookup: out[n] = table[ids[n]] (NEOBERT.md §3 step 1; nothing is
// added — no position or type embeddings).

#include <cstdint>
#include <vector>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: table F32 [V, C]; out F32 [ids.size(), C]; every id in [0, V)
// (checked: the backend validates ids before calling).
void Embedding(const Tensor& table, const std::vector<int32_t>& ids, Tensor* out);

namespace cpu {
void Embedding(const float* table, int64_t cols, const int32_t* ids, int64_t n, float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
