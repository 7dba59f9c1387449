#pragma once
// Bias-free linear layer y = x · Wᵀ (W stored [out, in] as in the checkpoint)
// and its backward pass, on OpenBLAS.

#include <cstdint>

namespace neodb::encoder::train {

// x [rows, in], w [out, in] → y [rows, out] (overwritten).
template <typename T>
void LinearForward(const T* x, const T* w, int64_t rows, int64_t in, int64_t out, T* y);

// ADDS dx += dy · W and dw += dyᵀ · x. Either output may be nullptr (frozen
// weight, or an input that needs no gradient).
template <typename T>
void LinearBackward(const T* x, const T* w, const T* dy, int64_t rows, int64_t in, int64_t out,
                    T* dx, T* dw);

// Bias of a biased linear layer (BERT), applied after LinearForward:
// y[r] += b for every row r of y [rows, out].
template <typename T>
void AddBias(const T* b, int64_t rows, int64_t out, T* y);

// ADDS db += Σ_r dy[r] (the bias gradient); db may be nullptr.
template <typename T>
void BiasBackward(const T* dy, int64_t rows, int64_t out, T* db);

}  // namespace neodb::encoder::train
