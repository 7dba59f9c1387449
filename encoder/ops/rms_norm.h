#pragma once
// RMSNorm: out[n] = x[n] / sqrt(mean(x[n]²) + eps) ⊙ weight, per row, all in
// F32 (NEOBERT.md §3). One pass over the row to reduce, one to write.

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: x, out F32 [N, C] (out may alias x); weight F32 [C].
void RmsNorm(const Tensor& x, const Tensor& weight, float eps, Tensor* out);

namespace cpu {
void RmsNorm(const float* x, const float* weight, float eps, int64_t rows, int64_t cols,
             float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
