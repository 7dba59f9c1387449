#pragma once
// Linear layer without bias, weights in the PyTorch [out, in] layout:
// out = x · wᵀ, or out += x · wᵀ when `accumulate` (the residual add fused
// into the GEMM's beta = 1). The CPU body is one SGEMM over every
// token of the packed batch (oneDNN, gemm_cpu.h).

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: x F32 [N, K]; w F32 [M, K]; out F32 [N, M], not aliasing x or w.
void Linear(const Tensor& x, const Tensor& w, bool accumulate, Tensor* out);

namespace cpu {
// Row-major with explicit leading dimensions (elements).
void Linear(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t n, int64_t m,
            int64_t k, bool accumulate, float* out, int64_t ldo);
}  // namespace cpu

}  // namespace neodb::encoder::ops
