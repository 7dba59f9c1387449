#include "encoder/ops/layer_norm.h"

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

namespace neodb::encoder::ops {

void LayerNorm(const Tensor& x, const Tensor* bias, const Tensor& gamma, const Tensor& beta,
               float eps, Tensor* out) {
  NEODB_CHECK(x.rank() == 2);
  const int64_t rows = x.dim(0);
  const int64_t cols = x.dim(1);
  internal::CheckF32(x, {rows, cols}, "LayerNorm.x");
  if (bias != nullptr) internal::CheckF32(*bias, {cols}, "LayerNorm.bias");
  internal::CheckF32(gamma, {cols}, "LayerNorm.gamma");
  internal::CheckF32(beta, {cols}, "LayerNorm.beta");
  internal::CheckF32(*out, {rows, cols}, "LayerNorm.out");
  internal::CheckDevice(x.device(), gamma, beta, *out);
  switch (x.device()) {
    case Device::kCpu:
      // Rows on every GEMM thread (ops/parallel_cpu.h).
      return cpu::ParallelRows(rows, cols, [&](int64_t begin, int64_t end) {
        cpu::LayerNorm(x.data<float>() + begin * cols, bias ? bias->data<float>() : nullptr,
                       gamma.data<float>(), beta.data<float>(), eps, end - begin, cols,
                       out->data<float>() + begin * cols);
      });
    default:
      internal::NoBody("LayerNorm", x.device());
  }
}

}  // namespace neodb::encoder::ops
