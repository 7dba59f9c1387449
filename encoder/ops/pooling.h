#pragma once
// Pooling of last_hidden_state per sequence of a packed batch: the [CLS] row
// (first token) or the mean of every token ([CLS] and [SEP] included),
// accumulated in F32. No normalisation (NEOBERT.md §5).

#include <cstdint>
#include <vector>

#include "encoder/backend.h"
#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: hidden F32 [N, C]; out F32 [B, C]; offsets as in PackedBatch with
// B + 1 entries and every length ≥ 1.
void Pool(const Tensor& hidden, const std::vector<int64_t>& offsets, Pooling pooling, Tensor* out);

namespace cpu {
void Pool(const float* hidden, int64_t cols, const int64_t* offsets, int64_t batch, Pooling pooling,
          float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
