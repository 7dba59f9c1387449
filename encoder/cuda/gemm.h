#pragma once
// Gemm: the encoder's one matrix product, through cuBLASLt with F32
// accumulation (CUBLAS_COMPUTE_32F):
//
//   Y[m, n] = X[m, k] · W[n, k]ᵀ + beta · Y[m, n]      (all row-major)
//
// i.e. a Linear layer with the weight as stored in the checkpoint. X and W
// share `in` (F32, F16 or BF16); Y is `out` (the same type, or F32 — with
// beta = 1 and an F32 Y this adds the product into the F32 residual stream,
// fusing the residual add into the GEMM).
//
// Plans (descriptors, layouts and the heuristic's algorithm) are cached per
// shape and type. Thread-safety: as its CudaContext, not thread-safe.

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "common/status_macros.h"
#include "encoder/core/dtype.h"
#include "encoder/cuda/cuda_context.h"

namespace neodb::encoder::cuda {

class Gemm {
 public:
  explicit Gemm(const CudaContext* ctx) : ctx_(ctx) {}
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // REQUIRES: device pointers; beta is 0 or 1 (1 needs out == F32 or in == out).
  absl::Status Run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k, DType in,
                   DType out, float beta);

 private:
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo;
  };
  using Key = std::tuple<int64_t, int64_t, int64_t, DType, DType, bool>;
  absl::StatusOr<Plan*> GetPlan(const Key& key);
  static void Destroy(Plan& plan);

  const CudaContext* ctx_;
  std::map<Key, Plan> plans_;
};

}  // namespace neodb::encoder::cuda
