#include "encoder/ops/gelu.h"

#include "encoder/ops/op_checks.h"
#include "encoder/ops/parallel_cpu.h"

namespace neodb::encoder::ops {

void BiasGelu(const Tensor& bias, Tensor* u) {
  NEODB_CHECK(u->rank() == 2);
  const int64_t rows = u->dim(0);
  const int64_t cols = u->dim(1);
  internal::CheckF32(*u, {rows, cols}, "BiasGelu.u");
  internal::CheckF32(bias, {cols}, "BiasGelu.bias");
  internal::CheckDevice(u->device(), bias);
  switch (u->device()) {
    case Device::kCpu:
      return cpu::ParallelRows(rows, cols, [&](int64_t begin, int64_t end) {
        cpu::BiasGelu(bias.data<float>(), end - begin, cols, u->data<float>() + begin * cols);
      });
    default:
      internal::NoBody("BiasGelu", u->device());
  }
}

}  // namespace neodb::encoder::ops
