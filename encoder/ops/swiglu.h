#pragma once
// SwiGLU activation of the fused w12 output: out = SiLU(u[:, :F]) ⊙ u[:, F:]
// — the FIRST half is gated (NEOBERT.md §3). One pass, exp vectorised.

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: u F32 [N, 2F]; out F32 [N, F], not aliasing u.
void SwiGlu(const Tensor& u, Tensor* out);

namespace cpu {
void SwiGlu(const float* u, int64_t rows, int64_t ffn_dim, float* out);
}  // namespace cpu

}  // namespace neodb::encoder::ops
