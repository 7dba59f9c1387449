#include "encoder/cuda/gemm.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"

namespace neodb::encoder::cuda {
namespace {

absl::StatusOr<cudaDataType_t> CudaType(DType t) {
  switch (t) {
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("GEMM dtype ", std::string(DTypeName(t)), " is not F32, F16 or BF16"));
  }
}

// Token counts vary from batch to batch: bound the cache instead of letting
// it grow with every distinct length.
constexpr size_t kMaxPlans = 512;

}  // namespace

Gemm::~Gemm() {
  for (auto& [key, plan] : plans_) Destroy(plan);
}

void Gemm::Destroy(Plan& plan) {
  if (plan.a) Lt().MatrixLayoutDestroy(plan.a);
  if (plan.b) Lt().MatrixLayoutDestroy(plan.b);
  if (plan.c) Lt().MatrixLayoutDestroy(plan.c);
  if (plan.desc) Lt().MatmulDescDestroy(plan.desc);
  plan = Plan{};
}

absl::StatusOr<Gemm::Plan*> Gemm::GetPlan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  if (plans_.size() >= kMaxPlans) {
    for (auto& [k, p] : plans_) Destroy(p);
    plans_.clear();
  }
  const auto [m, n, k, in, out, accumulate] = key;
  ASSIGN_OR_RETURN(cudaDataType_t in_type, CudaType(in));
  ASSIGN_OR_RETURN(cudaDataType_t out_type, CudaType(out));

  // Column-major view: Yᵀ[n, m] = W[n, k] · Xᵀ[k, m]. The row-major W [n, k]
  // is a column-major [k, n] matrix, used transposed; the row-major X [m, k]
  // is a column-major [k, m] matrix, used as is.
  Plan plan;
  absl::Status st = [&]() -> absl::Status {
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &trans_a, sizeof(trans_a)));
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                       &trans_b, sizeof(trans_b)));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.a, in_type, k, n, k));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.b, in_type, k, m, k));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.c, out_type, n, m, n));

    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulPreferenceCreate(&pref));
    const uint64_t ws = ctx_->workspace_bytes();
    cublasStatus_t ps = Lt().MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t result = {};
    int returned = 0;
    if (ps == CUBLAS_STATUS_SUCCESS) {
      ps = Lt().MatmulAlgoGetHeuristic(ctx_->lt(), plan.desc, plan.a, plan.b, plan.c, plan.c,
                                       pref, 1, &result, &returned);
    }
    Lt().MatmulPreferenceDestroy(pref);
    CUBLAS_RETURN_IF_ERROR(ps);
    if (returned == 0) {
      return absl::UnimplementedError(
          absl::StrCat("cuBLASLt has no algorithm for GEMM m=", m, " n=", n, " k=", k, " in ",
                       std::string(DTypeName(in)), " out ", std::string(DTypeName(out))));
    }
    plan.algo = result.algo;
    return absl::OkStatus();
  }();
  if (!st.ok()) {
    Destroy(plan);
    return st;
  }
  auto [pos, inserted] = plans_.emplace(key, plan);
  return &pos->second;
}

absl::Status Gemm::Run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k,
                       DType in, DType out, float beta) {
  if (m == 0 || n == 0) return absl::OkStatus();
  NEODB_CHECK(beta == 0.f || beta == 1.f);
  ASSIGN_OR_RETURN(Plan * plan, GetPlan(Key{m, n, k, in, out, beta != 0.f}));
  const float alpha = 1.f;
  CUBLAS_RETURN_IF_ERROR(Lt().Matmul(
      ctx_->lt(), plan->desc, &alpha, w, plan->a, x, plan->b, &beta, y, plan->c, y, plan->c,
      &plan->algo, ctx_->workspace(), ctx_->workspace_bytes(), ctx_->stream()));
  return absl::OkStatus();
}

}  // namespace neodb::encoder::cuda
