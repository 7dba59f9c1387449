#include "encoder/train/cuda/train_gemm.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_check.h"

namespace neodb::encoder::train::cuda {
namespace {

using encoder::cuda::Lt;

// Token counts vary from batch to batch: bound the cache.
constexpr size_t kMaxPlans = 1024;

// The largest power of two, at most 256, that divides the address.
uint32_t Alignment(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 4 && a % align != 0) align /= 2;
  return align;
}

}  // namespace

TrainGemm::~TrainGemm() {
  for (auto& [key, plan] : plans_) Destroy(plan);
}

void TrainGemm::Destroy(Plan& plan) {
  if (plan.a) Lt().MatrixLayoutDestroy(plan.a);
  if (plan.b) Lt().MatrixLayoutDestroy(plan.b);
  if (plan.c) Lt().MatrixLayoutDestroy(plan.c);
  if (plan.desc) Lt().MatmulDescDestroy(plan.desc);
  plan = Plan{};
}

// Row-major C = op(A)·op(B) is column-major Cᵀ[n, m] = op(B)ᵀ·op(A)ᵀ: cuBLASLt
// multiplies B's storage (column-major [n, k] with ld ldb when B is not
// transposed, [k, n] when it is) by A's ([k, m] / [m, k] with ld lda) into
// C's ([n, m], ld ldc), with the same transpose flags.
absl::StatusOr<TrainGemm::Plan*> TrainGemm::GetPlan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  if (plans_.size() >= kMaxPlans) {
    for (auto& [k, p] : plans_) Destroy(p);
    plans_.clear();
  }
  const auto [trans_a, trans_b, m, n, k, lda, ldb, ldc, align_a, align_b, align_c] = key;
  Plan plan;
  absl::Status st = [&]() -> absl::Status {
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_first = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_second = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &op_first, sizeof(op_first)));
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                       &op_second, sizeof(op_second)));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.a, CUDA_R_32F, trans_b ? k : n,
                                                   trans_b ? n : k, ldb));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.b, CUDA_R_32F, trans_a ? m : k,
                                                   trans_a ? k : m, lda));
    CUBLAS_RETURN_IF_ERROR(Lt().MatrixLayoutCreate(&plan.c, CUDA_R_32F, n, m, ldc));
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_RETURN_IF_ERROR(Lt().MatmulPreferenceCreate(&pref));
    const uint64_t ws = ctx_->workspace_bytes();
    cublasStatus_t ps = Lt().MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t result = {};
    int returned = 0;
    // cuBLASLt's A is our B and its B our A (the column-major view above).
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c}};
    for (const auto& [attr, value] : aligns) {
      if (ps == CUBLAS_STATUS_SUCCESS) {
        ps = Lt().MatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value));
      }
    }
    if (ps == CUBLAS_STATUS_SUCCESS) {
      ps = Lt().MatmulAlgoGetHeuristic(ctx_->lt(), plan.desc, plan.a, plan.b, plan.c, plan.c,
                                       pref, 1, &result, &returned);
    }
    Lt().MatmulPreferenceDestroy(pref);
    CUBLAS_RETURN_IF_ERROR(ps);
    if (returned == 0) {
      return absl::UnimplementedError(absl::StrCat("cuBLASLt has no F32 algorithm for GEMM m=", m,
                                                   " n=", n, " k=", k));
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

absl::Status TrainGemm::Run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    if (beta != 0.f) return absl::OkStatus();
    for (int64_t r = 0; r < m; ++r) {
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(c + r * ldc, 0, n * sizeof(float), ctx_->stream()));
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Plan * plan, GetPlan(Key{trans_a, trans_b, m, n, k, lda, ldb, ldc, Alignment(a),
                                            Alignment(b), Alignment(c)}));
  CUBLAS_RETURN_IF_ERROR(Lt().Matmul(ctx_->lt(), plan->desc, &alpha, b, plan->a, a, plan->b, &beta,
                                     c, plan->c, c, plan->c, &plan->algo, ctx_->workspace(),
                                     ctx_->workspace_bytes(), ctx_->stream()));
  return absl::OkStatus();
}

}  // namespace neodb::encoder::train::cuda
