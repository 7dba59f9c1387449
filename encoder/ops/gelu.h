#pragma once
// Bias and GELU in one pass over the FFN's first projection:
//   u[n, i] ← GELU(u[n, i] + bias[i]),  GELU(v) = v/2 · (1 + erf(v/√2)),
// the exact (erf) form that Hugging Face calls "gelu" (BERT's hidden_act).
//
// erf is a rational approximation, odd polynomial over even polynomial in
// x clamped to [−4, 4] (outside, erf(x) is ±1 in F32): no exp. The loop runs
// 16 wide on AVX-512 hosts and scalar elsewhere (gelu_cpu.cc). Its error
// against std::erf is below 1e-6 (bert_test checks it over [−8, 8]).

#include <cstdint>

#include "encoder/core/tensor.h"

namespace neodb::encoder::ops {

// REQUIRES: u F32 [N, F]; bias F32 [F].
void BiasGelu(const Tensor& bias, Tensor* u);

namespace cpu {
void BiasGelu(const float* bias, int64_t rows, int64_t cols, float* u);
// The approximation BiasGelu uses (exposed for its accuracy test).
float Erf(float x);
}  // namespace cpu

}  // namespace neodb::encoder::ops
