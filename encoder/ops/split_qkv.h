#pragma once
// Splits a fused [Q | K | V] projection into head-major Q, K, V, adding the
// projections' bias on the way (BERT's attention: no RoPE, biases on all
// three). Input row t of `qkv` is [3C]: columns [0, C) = q, [C, 2C) = k,
// [2C, 3C) = v, and head h owns columns [hD, hD + D) of each (the layout
// of PyTorch's separate query/key/value Linears stacked at load). Outputs are
// [H, N, D], the layout ops::Attention takes.

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: qkv F32 [N, 3·H·D]; bias F32 [3·H·D]; q, k, v F32 [H, N, D].
void SplitQkv(const Tensor& qkv, const Tensor& bias, int64_t num_heads, Tensor* q, Tensor* k,
              Tensor* v);

namespace cpu {
// Tokens [begin, end) of the `tokens` rows (the outputs' N).
void SplitQkv(const float* qkv, const float* bias, int64_t tokens, int64_t num_heads,
              int64_t head_dim, float* q, float* k, float* v, int64_t begin, int64_t end);
}  // namespace cpu

}  // namespace neodb::encoder::ops
