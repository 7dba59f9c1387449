#pragma once
// LayerNorm forward and backward (BERT): y = (x − mean) · rstd ⊙ w + b row by
// row over [rows, cols], rstd = 1/sqrt(var + eps) with the biased variance,
// as torch.nn.LayerNorm and encoder/ops/layer_norm compute it. Reductions
// accumulate in double (two passes: mean, then centred squares).

#include <cstdint>

namespace neodb::encoder::train {

// Writes y [rows, cols] (may alias x) and, when mean/rstd != nullptr, the
// per-row mean and rstd the backward pass needs.
template <typename T>
void LayerNormForward(const T* x, const T* w, const T* b, int64_t rows, int64_t cols, double eps,
                      T* y, T* mean, T* rstd);

// Given dy, ADDS the gradient w.r.t. x into dx and w.r.t. w and b into dw
// and db (each may be nullptr to skip it). x is the forward's input.
template <typename T>
void LayerNormBackward(const T* x, const T* w, const T* mean, const T* rstd, const T* dy,
                       int64_t rows, int64_t cols, T* dx, T* dw, T* db);

}  // namespace neodb::encoder::train
