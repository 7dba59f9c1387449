#pragma once
// LayerNorm over rows, with an optional bias added first:
//   y = x[n] + bias,  out[n] = (y − mean(y)) / sqrt(var(y) + eps) ⊙ gamma + beta,
// var the biased (population) variance, as torch.nn.LayerNorm computes it;
// reductions in F32, two passes (mean, then centred squares) so a large mean
// does not cancel the variance away.
//
// BERT's post-norm sublayers end with LayerNorm(residual + x·Wᵀ + b): the
// residual add is fused into the GEMM (beta = 1) and the projection's bias
// into this op's first pass, so neither needs a pass of its own.

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: x, out F32 [N, C] (out may alias x); bias (nullable), gamma, beta
// F32 [C].
void LayerNorm(const Tensor& x, const Tensor* bias, const Tensor& gamma, const Tensor& beta,
               float eps, Tensor* out);

namespace cpu {
// bias may be nullptr.
void LayerNorm(const float* x, const float* bias, const float* gamma, const float* beta, float eps,
               int64_t rows, int64_t cols, float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
