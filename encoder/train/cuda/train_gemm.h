#pragma once
// TrainGemm: training's F32 matrix product on the device through cuBLASLt,
// with the arguments of the CPU's train::Gemm<T> (blas.h) so that the CUDA op
// set reads as tape_ops.cc does:
//
//   C[m, n] = alpha · op(A)[m, k] · op(B)[k, n] + beta · C      (row-major)
//
// lda/ldb/ldc are the row strides of A, B, C as stored (before transposing).
// The three products of a Linear layer are Y = X·Wᵀ (false, true), dX += dY·W
// (false, false) and dW += dYᵀ·X (true, false). F32 in, F32 out, F32
// accumulation (CUBLAS_COMPUTE_32F, no TF32: the gradient checks compare with
// the CPU in F32 bounds).
//
// Plans are cached per shape. Thread-safety: as its CudaContext, not
// thread-safe.

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "common/status_macros.h"
#include "encoder/cuda/cuda_context.h"

namespace neodb::encoder::train::cuda {

class TrainGemm {
 public:
  explicit TrainGemm(const encoder::cuda::CudaContext* ctx) : ctx_(ctx) {}
  ~TrainGemm();
  TrainGemm(const TrainGemm&) = delete;
  TrainGemm& operator=(const TrainGemm&) = delete;

  // REQUIRES: device pointers. A product with m, n or k of 0 only scales C
  // by beta (k == 0, beta 0: C is zeroed; beta 1: untouched).
  absl::Status Run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc);

 private:
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo;
  };
  // Transposes, m, n, k, lda, ldb, ldc, and the alignment (bytes, ≤ 256) of
  // a, b and c: cuBLASLt's heuristic assumes 256-byte aligned buffers unless
  // told otherwise, and a column block of q | k | v need not be.
  using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         uint32_t, uint32_t, uint32_t>;
  absl::StatusOr<Plan*> GetPlan(const Key& key);
  static void Destroy(Plan& plan);

  const encoder::cuda::CudaContext* ctx_;
  std::map<Key, Plan> plans_;
};

}  // namespace neodb::encoder::train::cuda
