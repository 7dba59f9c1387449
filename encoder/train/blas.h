#pragma once
// Gemm<T>: row-major C = alpha · op(A) · op(B) + beta · C through OpenBLAS
// (sgemm for float, dgemm for double), so every training op can be written
// once and instantiated in F32 (training) and F64 (gradient checks).

#include <cblas.h>

#include <cstdint>
#include <type_traits>

namespace neodb::encoder::train {

// op(A) is [m, k], op(B) is [k, n], C is [m, n]; lda/ldb/ldc are the row
// strides of A, B, C as stored (before transposition).
template <typename T>
inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                 int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "OpenBLAS multiplies float (sgemm) or double (dgemm)");
  if (m == 0 || n == 0) return;
  auto* const gemm = [] {
    if constexpr (std::is_same_v<T, float>) {
      return &cblas_sgemm;
    } else {
      return &cblas_dgemm;
    }
  }();
  gemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
       static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
       static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

}  // namespace neodb::encoder::train
