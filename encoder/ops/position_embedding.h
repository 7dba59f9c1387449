#pragma once
// Learned absolute positions (BERT): out[t] += table[t − offsets[b]] for every
// token t of sequence b of a packed batch, so positions restart at 0 in every
// sequence, as they would for each sequence run alone.

#include <cstdint>
#include <vector>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: table F32 [P, C]; out F32 [N, C]; offsets as in PackedBatch with
// offsets.back() == N and every length ≤ P (checked).
void AddPositionEmbedding(const Tensor& table, const std::vector<int64_t>& offsets, Tensor* out);

namespace cpu {
void AddPositionEmbedding(const float* table, int64_t cols, const int64_t* offsets,
                          int64_t batch, float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
