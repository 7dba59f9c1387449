#include "encoder/ops/rms_norm.h"

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

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
      return cpu::ParallelRows(rows, cols, [&](int64_t begin, int64_t end) {
        cpu::RmsNorm(x.data<float>() + begin * cols, weight.data<float>(), eps, end - begin, cols,
                     out->data<float>() + begin * cols);
      });
    default:
      internal::NoBody("RmsNorm", x.device());
  }
}

}  // namespace neodb::encoder::ops
