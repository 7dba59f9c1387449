#include "encoder/ops/rms_norm.h"

#include "encoder/ops/op_checks.h"

namespace neodb::encoder::ops {

void RmsNorm(const Tensor& x, const Tensor& weight, float eps, Tensor* out) {
  NEODB_CHECK(x.rank() == 2);
  const int64_t rows = x.dim(0);
  const int64_t cols = x.dim(1);
  internal::CheckF32(x, {rows, cols}, "RmsNorm.x");
  internal::CheckF32(weight, {cols}, "RmsNorm.weight");
  internal::CheckF32(*out, {rows, cols}, "RmsNorm.out");
  internal::CheckDevice(x.device(), weight, *out);
  switch (x.device()) {
    case Device::kCpu:
      return cpu::RmsNorm(x.data<float>(), weight.data<float>(), eps, rows, cols,
                          out->data<float>());
    default:
      internal::NoBody("RmsNorm", x.device());
  }
}

}  // namespace neodb::encoder::ops
