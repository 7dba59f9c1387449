#pragma once
// RMSNorm forward and backward (NEOBERT.md §3): y = x / sqrt(mean(x²) + eps) · w,
// row by row over a [rows, cols] matrix. Reductions accumulate in double.

#include <cstdint>

namespace neodb::encoder::train {

// Writes y [rows, cols] and, when rstd != nullptr, rstd[r] = 1/sqrt(mean(x_r²)+eps)
// (kept for the backward pass).
template <typename T>
void RmsNormForward(const T* x, const T* w, int64_t rows, int64_t cols, double eps, T* y, T* rstd);

// Given dy, ADDS the gradient w.r.t. x into dx and w.r.t. w into dw (either may
// be nullptr to skip it). Accumulating lets the caller pass the residual
// stream's gradient buffer directly.
template <typename T>
void RmsNormBackward(const T* x, const T* w, const T* rstd, const T* dy, int64_t rows, int64_t cols,
                     T* dx, T* dw);

}  // namespace neodb::encoder::train
